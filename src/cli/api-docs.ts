/** `slipway api-docs [--out DIR]`: writes the OpenAPI document and the JSON-RPC method table (npm run docs keeps docs/ current). */
import fs from 'node:fs';
import path from 'node:path';
import { methodsMarkdown, openApiDocument } from '../http/api-description';
import { parseOptions } from './parse-options';

export async function runApiDocs(args: string[]): Promise<number> {
  const { values } = parseOptions('api-docs', args, { out: { type: 'string' } });
  const out = values.out ?? 'docs';
  fs.mkdirSync(out, { recursive: true });
  fs.writeFileSync(path.join(out, 'openapi.json'), `${JSON.stringify(openApiDocument(), null, 2)}\n`);
  fs.writeFileSync(path.join(out, 'METHODS.md'), methodsMarkdown());
  process.stdout.write(`wrote ${path.join(out, 'openapi.json')} and ${path.join(out, 'METHODS.md')}\n`);
  return 0;
}
