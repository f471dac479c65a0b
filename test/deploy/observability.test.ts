/**
 * The monitoring shipped under deploy/ stays true to the code: the alert rules pass
 * `promtool check rules` (Debian's prometheus package; scripts/ensure-prometheus.sh installs
 * it before the tests where it can) and raise their alerts in the scenarios of
 * alert-scenarios.yml (`promtool test rules`), and every metric and label that the rules and the
 * Grafana dashboard name is one Slipway's registry exports, so renaming a metric or a label
 * fails here rather than on an operator's silent panel or an alert that can never fire.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, it } from 'node:test';
import { parse, stringify } from 'yaml';
import { collectProcessMetrics, metricsRegistry } from '../../src/metrics/metrics';

const ROOT = path.resolve(__dirname, '../../..');
const RULES = path.join(ROOT, 'deploy/prometheus/slipway-alerts.yml');
const DASHBOARD = path.join(ROOT, 'deploy/grafana/slipway-dashboard.json');
/** promtool unit tests: series over time, and the alerts each rule must (and must not) raise. */
const SCENARIOS = path.join(ROOT, 'test/deploy/alert-scenarios.yml');
const PROMTOOL_MISSING =
  "promtool is missing: install Debian's prometheus package (apt-get install prometheus); .ci/run and npm test do when they can";
/** Labels Prometheus adds to every scraped series (target labels), whatever the metric. */
const TARGET_LABELS = ['instance', 'job'];

interface Rule {
  alert?: string;
  expr: string;
  for?: string;
  annotations?: Record<string, string>;
}
interface Panel {
  type: string;
  title: string;
  datasource?: unknown;
  fieldConfig?: { defaults?: { unit?: string } };
  targets?: { expr: string }[];
  panels?: Panel[];
}

/** Every series name Slipway exposes (histograms as their _bucket, _sum and _count), with its labels. */
function exportedSeries(): Map<string, Set<string>> {
  collectProcessMetrics();
  const series = new Map<string, Set<string>>();
  for (const metric of metricsRegistry.getMetricsAsArray()) {
    const labels = new Set([...((metric as unknown as { labelNames?: string[] }).labelNames ?? []), ...TARGET_LABELS]);
    const type = (metric as unknown as { type: string }).type;
    const names = type === 'histogram' ? ['_bucket', '_sum', '_count'] : type === 'summary' ? ['', '_sum', '_count'] : [''];
    for (const suffix of names) series.set(metric.name + suffix, suffix === '_bucket' ? new Set([...labels, 'le']) : labels);
  }
  return series;
}

const PROMQL_KEYWORDS = new Set([
  'and',
  'or',
  'unless',
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'offset',
  'bool',
  'inf',
  'nan',
]);

/**
 * The metric names a PromQL expression selects, and the label names it matches or groups by.
 * Strings, ranges and Grafana's `$variables` are removed first; a word followed by `(` is a
 * function or an aggregation, and a number or a duration is not a name.
 */
export function promqlNames(expr: string): { metrics: string[]; labels: string[] } {
  const labels: string[] = [];
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\{([^}]*)\}/g, (_, matchers: string) => {
      for (const m of matchers.matchAll(/([A-Za-z_]\w*)\s*(?:=~|!~|!=|=)/g)) labels.push(m[1]!);
      return ' ';
    })
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g, (_, list: string) => {
      labels.push(
        ...list
          .split(',')
          .map((label) => label.trim())
          .filter(Boolean),
      );
      return ' ';
    });
  const metrics: string[] = [];
  for (const m of bare.matchAll(/(\d[\w.]*)|([A-Za-z_:][\w:]*)(\s*\()?/g)) {
    if (m[2] === undefined || m[3] !== undefined || PROMQL_KEYWORDS.has(m[2].toLowerCase())) continue;
    metrics.push(m[2]);
  }
  return { metrics, labels };
}

/** Runs promtool, failing with what it said unless it succeeds. */
function promtool(args: string[]): { stdout: string } {
  const run = spawnSync('promtool', args, { encoding: 'utf8', timeout: 30_000 });
  if ((run.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') assert.fail(PROMTOOL_MISSING);
  assert.equal(run.status, 0, `promtool ${args.join(' ')} failed:\n${run.stdout}${run.stderr}`);
  return { stdout: run.stdout };
}

const rules = (): Rule[] =>
  (parse(fs.readFileSync(RULES, 'utf8')) as { groups: { rules: Rule[] }[] }).groups.flatMap((group) => group.rules);

function panels(list: Panel[]): Panel[] {
  return list.flatMap((panel) => [panel, ...panels(panel.panels ?? [])]);
}
const dashboard = () =>
  JSON.parse(fs.readFileSync(DASHBOARD, 'utf8')) as { panels: Panel[]; templating: { list: { definition?: string }[] } };

/** Where each expression came from, and the expression. */
function expressions(): [string, string][] {
  const fromRules = rules().map((rule): [string, string] => [`alert ${rule.alert}`, rule.expr]);
  const fromPanels = panels(dashboard().panels).flatMap((panel) =>
    (panel.targets ?? []).map((target): [string, string] => [`panel "${panel.title}"`, target.expr]),
  );
  // label_values(metric, label) is Grafana's, not PromQL: checked as the selector metric{label=""}.
  const fromVariables = dashboard()
    .templating.list.filter((variable) => variable.definition !== undefined)
    .map((variable): [string, string] => [
      `variable ${variable.definition}`,
      variable.definition!.replace(/label_values\(\s*([^,]+),\s*(\w+)\s*\)/, '$1{$2=""}'),
    ]);
  return [...fromRules, ...fromPanels, ...fromVariables];
}

describe('deploy/ monitoring', () => {
  it('passes promtool check rules', () => {
    const run = promtool(['check', 'rules', RULES]);
    assert.match(run.stdout, new RegExp(`SUCCESS: ${rules().length} rules found`));
  });

  it('raises each alert in its scenario and not outside it (promtool test rules)', () => {
    // Without their annotations: promtool compares them word for word, and `check rules` parses their templates.
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-alerts-'));
    try {
      const rulesFile = parse(fs.readFileSync(RULES, 'utf8')) as { groups: { rules: Rule[] }[] };
      for (const rule of rulesFile.groups.flatMap((group) => group.rules)) delete rule.annotations;
      fs.writeFileSync(path.join(dir, 'slipway-alerts.yml'), stringify(rulesFile));
      fs.copyFileSync(SCENARIOS, path.join(dir, 'alert-scenarios.yml'));
      promtool(['test', 'rules', path.join(dir, 'alert-scenarios.yml')]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('has a scenario for every alert', () => {
    const scenarios = parse(fs.readFileSync(SCENARIOS, 'utf8')) as {
      tests: { alert_rule_test: { alertname: string; exp_alerts?: unknown[] }[] }[];
    };
    const raised = new Set(
      scenarios.tests.flatMap((test) =>
        test.alert_rule_test.filter((check) => (check.exp_alerts ?? []).length > 0).map((check) => check.alertname),
      ),
    );
    assert.deepEqual(
      rules()
        .map((rule) => rule.alert)
        .filter((alert) => !raised.has(alert!)),
      [],
    );
  });

  it('finds the metrics and labels of an expression, and nothing else', () => {
    assert.deepEqual(
      promqlNames(
        'sum by (le, route) (rate(a_bucket{state=~"x|y}", instance=~"$instance"}[$__rate_interval] offset 1h)) / on () b > 0.5 and c:d unless 1e3',
      ),
      { metrics: ['a_bucket', 'b', 'c:d'], labels: ['state', 'instance', 'le', 'route'] },
    );
  });

  it('names only metrics and labels that Slipway exports', () => {
    const series = exportedSeries();
    const list = expressions();
    assert.ok(list.length > 20, `only ${list.length} expressions found`);
    const unknown: string[] = [];
    for (const [where, expr] of list) {
      const { metrics, labels } = promqlNames(expr);
      assert.ok(metrics.length > 0, `${where} selects no metric: ${expr}`);
      for (const metric of metrics) if (!series.has(metric)) unknown.push(`${where}: no metric ${metric}`);
      const known = new Set(metrics.flatMap((metric) => [...(series.get(metric) ?? [])]));
      for (const label of labels) if (!known.has(label)) unknown.push(`${where}: no label ${label} on ${metrics.join(', ')}`);
    }
    assert.deepEqual(unknown, []);
  });

  it('gives every alert a duration, a summary and a description, and every panel a unit and the chosen data source', () => {
    for (const rule of rules()) {
      assert.ok(rule.alert, `a rule without an alert name: ${rule.expr}`);
      assert.ok(rule.for, `${rule.alert} has no for:`);
      assert.ok(rule.annotations?.summary && rule.annotations.description, `${rule.alert} lacks a summary or a description`);
    }
    for (const panel of panels(dashboard().panels).filter((panel) => panel.type !== 'row')) {
      assert.ok(panel.fieldConfig?.defaults?.unit, `panel "${panel.title}" has no unit`);
      assert.deepEqual(panel.datasource, { type: 'prometheus', uid: '${datasource}' }, `panel "${panel.title}"`);
    }
  });
  it("every metric Slipway registers is in docs/API.md's metrics table", () => {
    collectProcessMetrics();
    const api = fs.readFileSync(path.join(__dirname, '../../../docs/API.md'), 'utf8');
    const table = api.slice(api.indexOf('## Metrics'), api.indexOf('## Versioning'));
    const missing = metricsRegistry
      .getMetricsAsArray()
      .map((metric) => metric.name)
      .filter((name) => name.startsWith('slipway_') && !table.includes(`\`${name}\``));
    assert.deepEqual(missing, []);
  });
});
