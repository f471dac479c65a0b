/** `slipway api-docs [--out DIR]`: writes the OpenAPI document, the JSON-RPC method table and CONFIG.md's settings table (npm run docs keeps docs/ current). */
import fs from 'node:fs';
import path from 'node:path';
import { withSettingsTable } from '../config/config-docs';
import { methodsMarkdown, openApiDocument } from '../http/api-description';
import { parseOptions } from './parse-options';

export async function runApiDocs(args: string[]): Promise<number> {
  const { values } = parseOptions('api-docs', args, { out: { type: 'string' } });
  const out = values.out ?? 'docs';
  fs.mkdirSync(out, { recursive: true });
  fs.writeFileSync(path.join(out, 'openapi.json'), `${JSON.stringify(openApiDocument(), null, 2)}\n`);
  fs.writeFileSync(path.join(out, 'METHODS.md'), methodsMarkdown());
  const configDoc = path.join(out, 'CONFIG.md');
  fs.writeFileSync(configDoc, withSettingsTable(fs.readFileSync(configDoc, 'utf8')));
  process.stdout.write(`wrote ${path.join(out, 'openapi.json')}, ${path.join(out, 'METHODS.md')} and the settings table of ${configDoc}\n`);
  return 0;
}
