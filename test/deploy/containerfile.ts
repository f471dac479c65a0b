/**
 * What the Containerfile's runtime stage (its last) declares, read from the file: the
 * entrypoint, command and health check (each in the JSON form the Containerfile uses), the
 * user, the volumes and the exposed ports. The compose check and the image run compare
 * deploy/compose.yaml and the built image with it.
 */
export interface ContainerfileImage {
  readonly entrypoint: string[];
  readonly cmd: string[];
  /** The health check's command, without `CMD`. */
  readonly healthcheck: string[];
  readonly user: string;
  readonly volumes: string[];
  readonly ports: number[];
  readonly workdir: string;
}

/** The instructions of the last stage, continuation lines joined, comments dropped. */
function lastStage(text: string): string[] {
  const instructions = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const from = instructions.map((line, i) => (/^FROM\s/i.test(line) ? i : -1)).filter((i) => i >= 0);
  if (from.length === 0) throw new Error('the Containerfile has no FROM');
  return instructions.slice(from[from.length - 1]);
}

function jsonForm(instruction: string | undefined, name: string): string[] {
  if (instruction === undefined) throw new Error(`the Containerfile's runtime stage has no ${name}`);
  const json = instruction.slice(instruction.indexOf('['));
  const value: unknown = JSON.parse(json);
  if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) throw new Error(`${name} is not in JSON form: ${instruction}`);
  return value;
}

export function containerfileImage(text: string): ContainerfileImage {
  const stage = lastStage(text);
  const last = (keyword: string) => stage.filter((line) => line.toUpperCase().startsWith(`${keyword} `)).pop();
  const health = last('HEALTHCHECK');
  const healthCommand = health === undefined ? undefined : health.slice(health.search(/\sCMD\s/) + 1);
  const healthcheck = jsonForm(healthCommand, 'HEALTHCHECK … CMD');
  return {
    entrypoint: jsonForm(last('ENTRYPOINT'), 'ENTRYPOINT'),
    cmd: jsonForm(last('CMD'), 'CMD'),
    healthcheck,
    user: last('USER')?.split(/\s+/)[1] ?? 'root',
    volumes: stage.filter((l) => /^VOLUME\s/i.test(l)).flatMap((l) => l.split(/\s+/).slice(1)),
    ports: stage
      .filter((l) => /^EXPOSE\s/i.test(l))
      .flatMap((l) => l.split(/\s+/).slice(1))
      .map((p) => Number(p.split('/')[0])),
    workdir: last('WORKDIR')?.split(/\s+/)[1] ?? '/',
  };
}
