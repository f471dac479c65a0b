/**
 * deploy/compose.yaml, read with a YAML parser (it is not run here: no image registry is
 * reachable for PostgreSQL's, Redis's, Prometheus's or Grafana's images; docs/DEPLOY.md says
 * what that leaves untested). Everything it refers to exists and agrees: services named in
 * `depends_on`, health checks behind `service_healthy`, named volumes, files mounted from the
 * repository, published ports (none twice, Slipway's among those the Containerfile exposes),
 * the gateways' commands and health checks against the Containerfile's entrypoint and
 * HEALTHCHECK, Prometheus's scrape targets, rule file and token file, Grafana's data source
 * and dashboard folder, the gateways' configuration file (one Slipway accepts, its upstreams
 * the ledger service's); no secret is written in the file or the Containerfile. Compose's own
 * schema (docker-compose config, where installed) and promtool accept it and the Prometheus
 * configuration.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { parseConfigFile } from '../../src/config/config-file';
import { containerfileImage } from './containerfile';

const ROOT = path.resolve(__dirname, '../../..');
const DEPLOY = path.join(ROOT, 'deploy');
const COMPOSE_FILE = path.join(DEPLOY, 'compose.yaml');
const PROMTOOL_MISSING =
  "promtool is missing: install Debian's prometheus package (apt-get install prometheus); .ci/run and npm test do when they can";
/** Variables that hold secrets: set only from the environment (deploy/.env), never written. */
const SECRETS = [
  'POSTGRES_PASSWORD',
  'SLIPWAY_METRICS_TOKEN',
  'GRAFANA_ADMIN_PASSWORD',
  'GF_SECURITY_ADMIN_PASSWORD',
  'SLIPWAY_DASHBOARD_TOKEN',
];

interface Service {
  image?: string;
  build?: { context: string; dockerfile: string };
  command?: string[];
  entrypoint?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: string[];
  tmpfs?: string[];
  healthcheck?: { test: string[] };
  depends_on?: Record<string, { condition: string }>;
}

interface Compose {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
}

function readYaml<T>(file: string): T {
  return parse(fs.readFileSync(file, 'utf8'), { merge: true, strict: true }) as T;
}

/** The volume entries of a service as source and target (`source:target[:mode]`). */
function mounts(service: Service): { source: string; target: string }[] {
  return (service.volumes ?? []).map((entry) => {
    const [source, target] = entry.split(':') as [string, string];
    return { source, target };
  });
}

/** The subcommands bin/slipway (src/cli/main.ts) knows. */
function cliCommands(): Set<string> {
  const main = fs.readFileSync(path.join(ROOT, 'src/cli/main.ts'), 'utf8');
  return new Set([...main.matchAll(/case '([a-z-]+)':/g)].map((m) => m[1]!));
}

function check(compose: Compose, containerfile: string): void {
  const image = containerfileImage(containerfile);
  const services = compose.services;
  const names = new Set(Object.keys(services));
  const slipway = Object.entries(services).filter(([, s]) => s.build !== undefined);
  assert.ok(slipway.length >= 3, 'the ledger and two gateways are built from the Containerfile');

  for (const [name, service] of Object.entries(services)) {
    for (const [dependency, { condition }] of Object.entries(service.depends_on ?? {})) {
      assert.ok(names.has(dependency), `${name} depends on ${dependency}, which is not a service`);
      if (condition === 'service_healthy')
        assert.ok(
          services[dependency]!.healthcheck !== undefined,
          `${name} waits for ${dependency} to be healthy, which has no health check`,
        );
    }
    for (const { source, target } of mounts(service)) {
      assert.ok(target?.startsWith('/'), `${name} mounts ${source} at ${target}`);
      if (source.startsWith('.') || source.startsWith('/'))
        assert.ok(fs.existsSync(path.resolve(DEPLOY, source)), `${name} mounts ${source}, which is not in the repository`);
      else
        assert.ok(compose.volumes !== undefined && source in compose.volumes, `${name} mounts the volume ${source}, which is not declared`);
    }
  }
  const used = new Set(Object.values(services).flatMap((s) => mounts(s).map((m) => m.source)));
  for (const volume of Object.keys(compose.volumes ?? {}))
    assert.ok(used.has(volume), `the volume ${volume} is declared but no service mounts it`);

  const published = Object.entries(services).flatMap(([name, s]) =>
    (s.ports ?? []).map((p) => {
      const parts = p.split(':');
      return { name, host: parts.slice(0, -1).join(':'), container: Number(parts[parts.length - 1]) };
    }),
  );
  const hosts = published.map((p) => p.host);
  assert.deepEqual(
    hosts.filter((h, i) => hosts.indexOf(h) !== i),
    [],
    'no host port is published twice',
  );

  // The entrypoint is node on the compiled CLI, with no shell or bin/slipway (which would install and build) between:
  // the services' commands are its subcommands, and SIGTERM reaches serve itself.
  assert.equal(image.entrypoint.length, 2, `the entrypoint is node and the CLI: ${JSON.stringify(image.entrypoint)}`);
  assert.equal(image.entrypoint[0], 'node', `the entrypoint is node and the CLI: ${JSON.stringify(image.entrypoint)}`);
  assert.match(
    image.entrypoint[1]!,
    /\/dist\/src\/cli\/main\.js$/,
    `the entrypoint is node and the CLI: ${JSON.stringify(image.entrypoint)}`,
  );
  const commands = cliCommands();
  for (const [name, service] of slipway) {
    assert.equal(service.build!.dockerfile, 'Containerfile', `${name} is built from the Containerfile`);
    assert.ok(
      fs.existsSync(path.resolve(DEPLOY, service.build!.context, service.build!.dockerfile)),
      `${name}'s build context holds the Containerfile`,
    );
    assert.ok(
      service.entrypoint === undefined || JSON.stringify(service.entrypoint) === JSON.stringify(image.entrypoint),
      `${name} keeps the image's entrypoint`,
    );
    const command = service.command ?? image.cmd;
    assert.ok(commands.has(command[0]!), `${name}'s command ${command[0]} is one the entrypoint (bin/slipway's main.js) knows`);
    for (const port of published.filter((p) => p.name === name))
      assert.ok(image.ports.includes(port.container), `${name} publishes ${port.container}, which the Containerfile does not expose`);
    const test = service.healthcheck?.test;
    assert.ok(test !== undefined, `${name} has a health check`);
    assert.deepEqual(test.slice(0, 1 + image.healthcheck.length), ['CMD', ...image.healthcheck], `${name}'s health check is the image's`);
    const url = test[1 + image.healthcheck.length];
    if (command[0] === 'serve') {
      assert.equal(url, undefined, `${name} is checked at the gateway's own port (SLIPWAY_PORT)`);
      assert.ok(!service.command?.includes('--port'), `${name} listens on the image's SLIPWAY_PORT, which its health check reads`);
    } else {
      const port = service.command?.[service.command.indexOf('--port') + 1];
      assert.ok(
        port !== undefined && url === `http://127.0.0.1:${port}/health`,
        `${name}'s health check asks its own port (${port}): ${url}`,
      );
    }
  }

  // The gateways: their configuration file mounted where SLIPWAY_CONFIG says, upstreams on the ledger service's port.
  const gateways = slipway.filter(([, s]) => (s.command ?? image.cmd)[0] === 'serve');
  assert.equal(gateways.length, 2, 'two gateways');
  const ledger = slipway.find(([, s]) => s.command?.[0] === 'ledger');
  assert.ok(ledger !== undefined, 'the local cluster (slipway ledger) is a service');
  const ledgerPort = ledger[1].command![ledger[1].command!.indexOf('--port') + 1];
  for (const [name, service] of gateways) {
    const config = mounts(service).find((m) => m.target === service.environment?.SLIPWAY_CONFIG);
    assert.ok(config !== undefined, `${name}'s SLIPWAY_CONFIG is a mounted file`);
    const settingsJson: unknown = JSON.parse(fs.readFileSync(path.resolve(DEPLOY, config.source), 'utf8'));
    parseConfigFile(settingsJson, config.source); // throws, saying why, where Slipway would refuse it
    const settings = settingsJson as {
      upstreams: Record<string, { urls: string[] }>;
    };
    for (const upstream of Object.values(settings.upstreams))
      for (const url of upstream.urls)
        assert.ok(url.startsWith(`http://${ledger[0]}:${ledgerPort}`), `${name}'s upstream ${url} is the ledger service`);
    assert.ok(
      mounts(service).some((m) => m.target === image.volumes[0] && !m.source.startsWith('.')),
      `${name} keeps /data in a volume of its own`,
    );
    assert.match(service.environment?.SLIPWAY_POSTGRES_URL ?? '', /@postgres:5432\//, `${name} uses the postgres service`);
    assert.match(service.environment?.SLIPWAY_REDIS_URL ?? '', /^redis:\/\/redis:6379\//, `${name} uses the redis service`);
    assert.ok(services.postgres && services.redis, 'PostgreSQL and Redis are services');
  }
  const gatewayVolumes = gateways.map(([, s]) => mounts(s).find((m) => m.target === '/data')!.source);
  assert.equal(new Set(gatewayVolumes).size, gatewayVolumes.length, 'each gateway has a data volume of its own');

  // Prometheus: scrapes each gateway, loads the alert rules, reads the token the entrypoint writes.
  const prometheus = services.prometheus!;
  const promConfig = mounts(prometheus).find((m) => m.target === '/etc/prometheus/prometheus.yml');
  assert.ok(promConfig !== undefined, 'Prometheus gets its configuration from the repository');
  const prom = readYaml<{
    rule_files: string[];
    scrape_configs: { authorization?: { credentials_file: string }; static_configs: { targets: string[] }[] }[];
  }>(path.resolve(DEPLOY, promConfig.source));
  const targets = prom.scrape_configs.flatMap((s) => s.static_configs.flatMap((c) => c.targets));
  assert.deepEqual(targets.sort(), gateways.map(([name]) => `${name}:8080`).sort(), 'Prometheus scrapes both gateways at their port');
  for (const rules of prom.rule_files) {
    const mounted = mounts(prometheus).find((m) => m.target === rules);
    assert.ok(mounted !== undefined, `Prometheus's rule file ${rules} is mounted`);
    assert.equal(
      path.resolve(DEPLOY, mounted.source),
      path.join(DEPLOY, 'prometheus/slipway-alerts.yml'),
      'the rules loaded are deploy/prometheus/slipway-alerts.yml',
    );
  }
  assert.ok(prom.rule_files.length > 0, 'Prometheus loads the alert rules');
  for (const scrape of prom.scrape_configs) {
    const tokenFile = scrape.authorization?.credentials_file;
    assert.ok(tokenFile !== undefined, 'Prometheus scrapes with the metrics token');
    assert.ok(prometheus.entrypoint?.join(' ').includes(`> ${tokenFile}`), `Prometheus's entrypoint writes ${tokenFile}`);
    assert.ok(prometheus.tmpfs?.includes(path.dirname(tokenFile)), `${tokenFile} is on a tmpfs`);
  }

  // Grafana: the data source is the prometheus service, the dashboard file in the provisioned folder.
  const grafana = services.grafana!;
  const provisioning = mounts(grafana).find((m) => m.target === '/etc/grafana/provisioning');
  assert.ok(provisioning !== undefined, "Grafana's provisioning folder is mounted");
  const sources = readYaml<{ datasources: { url: string; type: string }[] }>(
    path.resolve(DEPLOY, provisioning.source, 'datasources/prometheus.yml'),
  );
  const promPort = prometheus.ports![0]!.split(':').pop();
  assert.deepEqual(
    sources.datasources.map((d) => [d.type, d.url]),
    [['prometheus', `http://prometheus:${promPort}`]],
    "Grafana's data source is the prometheus service",
  );
  const providers = readYaml<{ providers: { options: { path: string } }[] }>(
    path.resolve(DEPLOY, provisioning.source, 'dashboards/slipway.yml'),
  );
  const dashboard = mounts(grafana).find((m) => m.target.startsWith(`${providers.providers[0]!.options.path}/`));
  assert.ok(dashboard !== undefined, "the dashboard is mounted in the provider's folder");
  assert.equal(
    path.resolve(DEPLOY, dashboard.source),
    path.join(DEPLOY, 'grafana/slipway-dashboard.json'),
    'the dashboard provisioned is deploy/grafana/slipway-dashboard.json',
  );

  // Secrets: only from the environment.
  for (const [name, service] of Object.entries(services))
    for (const [variable, value] of Object.entries(service.environment ?? {}))
      if (SECRETS.includes(variable)) assert.match(value, /^\$\{[A-Z_]+:\?/, `${name}'s ${variable} comes from the environment, required`);
  const postgresUrls = Object.values(services)
    .map((s) => s.environment?.SLIPWAY_POSTGRES_URL)
    .filter((u) => u !== undefined);
  for (const url of postgresUrls)
    assert.match(url, /:\$\{POSTGRES_PASSWORD:\?[^}]*\}@/, "the gateways' PostgreSQL password comes from the environment");
  for (const variable of [...SECRETS, 'SLIPWAY_POSTGRES_URL', 'SLIPWAY_REDIS_URL'])
    assert.doesNotMatch(containerfile, new RegExp(`^\\s*(ENV|ARG)\\b.*\\b${variable}\\b`, 'm'), `the Containerfile sets no ${variable}`);
}

describe('deploy/compose.yaml', () => {
  const containerfile = fs.readFileSync(path.join(ROOT, 'Containerfile'), 'utf8');

  it('refers only to services, volumes, files, ports and health checks that exist, and agrees with the Containerfile', () => {
    check(readYaml<Compose>(COMPOSE_FILE), containerfile);
  });

  it('is refused by the same check when a reference is broken', () => {
    const broken = (edit: (c: Compose) => void, message: RegExp) => {
      const compose = readYaml<Compose>(COMPOSE_FILE);
      edit(compose);
      assert.throws(() => check(compose, containerfile), message);
    };
    broken((c) => delete c.services.ledger!.healthcheck, /ledger to be healthy/);
    broken((c) => (c.services['gateway-2']!.depends_on!.postgress = { condition: 'service_started' }), /postgress, which is not a service/);
    broken((c) => delete c.volumes!['gateway-2-data'], /gateway-2-data, which is not declared/);
    broken(
      (c) => (c.services.grafana!.volumes![1] = './grafana/dashboard.json:/etc/grafana/dashboards/slipway-dashboard.json:ro'),
      /not in the repository/,
    );
    broken((c) => (c.services['gateway-2']!.ports![0] = '127.0.0.1:8080:8080'), /published twice/);
    broken((c) => (c.services['gateway-1']!.command = ['run']), /command run/);
    broken(
      (c) => (c.services['gateway-1']!.healthcheck!.test = ['CMD', 'curl', '-f', 'http://127.0.0.1:8080/health']),
      /health check is the image's/,
    );
    broken((c) => (c.services.ledger!.command = ['ledger', '--port', '8898']), /ledger service|own port/);
    broken((c) => (c.services['gateway-1']!.environment!.SLIPWAY_METRICS_TOKEN = 'secret'), /from the environment/);
    assert.throws(
      () =>
        check(
          readYaml<Compose>(COMPOSE_FILE),
          containerfile.replace(
            'ENTRYPOINT ["node", "/opt/slipway/dist/src/cli/main.js"]',
            'ENTRYPOINT ["/opt/slipway/bin/slipway", "serve"]',
          ),
        ),
      /the entrypoint is node and the CLI/,
    );
  });

  it("passes Compose's own schema and interpolation (docker-compose config), and fails without the secrets", (t) => {
    if (spawnSync('docker-compose', ['version']).error !== undefined)
      return t.skip('docker-compose is not installed (apt-get install docker-compose): the schema is not checked');
    // docker-compose 1.29 (Debian's) predates the top-level `name`: a copy without it, beside the original (relative paths).
    const copy = path.join(DEPLOY, `.compose-check-${process.pid}.yaml`);
    // An empty env file of its own: never the operator's deploy/.env.
    const noEnv = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-compose-')), 'empty.env');
    fs.writeFileSync(noEnv, '');
    t.after(() => {
      fs.rmSync(copy, { force: true });
      fs.rmSync(path.dirname(noEnv), { recursive: true, force: true });
    });
    fs.writeFileSync(copy, fs.readFileSync(COMPOSE_FILE, 'utf8').replace(/^name: .*\n/m, ''));
    const config = (secrets: Record<string, string>) =>
      spawnSync('docker-compose', ['--project-name', 'slipway', '--env-file', noEnv, '-f', copy, 'config', '--quiet'], {
        encoding: 'utf8',
        timeout: 30_000,
        env: { PATH: process.env.PATH, ...secrets },
      });
    const valid = config({ POSTGRES_PASSWORD: 'p', SLIPWAY_METRICS_TOKEN: 'm', GRAFANA_ADMIN_PASSWORD: 'g' });
    assert.equal(valid.status, 0, `docker-compose config refused it:\n${valid.stdout}${valid.stderr}`);
    const missing = config({});
    assert.notEqual(missing.status, 0, 'without the secrets it does not start');
    assert.match(missing.stderr, /set it in deploy\/\.env/);
  });

  it('has a Prometheus configuration that promtool accepts, with the alert rules it loads', (t) => {
    if (spawnSync('promtool', ['--version']).error !== undefined) assert.fail(PROMTOOL_MISSING);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-prometheus-'));
    t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
    // The paths of the container, made local: the rules from deploy/, a token file as the entrypoint writes it.
    fs.writeFileSync(path.join(dir, 'token'), 'a-token');
    const config = fs
      .readFileSync(path.join(DEPLOY, 'prometheus/prometheus.yml'), 'utf8')
      .replace('/etc/prometheus/slipway-alerts.yml', path.join(DEPLOY, 'prometheus/slipway-alerts.yml'))
      .replaceAll('/tmp/slipway-metrics-token', path.join(dir, 'token'));
    fs.writeFileSync(path.join(dir, 'prometheus.yml'), config);
    const run = spawnSync('promtool', ['check', 'config', path.join(dir, 'prometheus.yml')], { encoding: 'utf8', timeout: 30_000 });
    assert.equal(run.status, 0, `promtool check config failed:\n${run.stdout}${run.stderr}`);
    assert.match(run.stdout, /SUCCESS: 1 rule files found/);
  });
});
