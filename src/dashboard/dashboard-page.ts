import { createHash } from 'node:crypto';

/**
 * The dashboard's page: one HTML document with its script inline, no framework. It follows
 * /dashboard/events (server-sent events) and draws the charts as SVG.
 */
export const DASHBOARD_PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Slipway</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
  body { font: 14px/1.4 system-ui, sans-serif; margin: 0 1.5rem 2rem; color: #1d2430; background: #f7f8fa; }
  h1 { font-size: 1.3rem; margin: 1rem 0 .2rem; } h2 { font-size: 1rem; margin: 1.4rem 0 .4rem; }
  #status { color: #5b6575; } #status.live::before { content: "● "; color: #1a9c4a; } #status.lost::before { content: "● "; color: #c0392b; }
  .charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(360px, 1fr)); gap: 1rem; }
  .chart { position: relative; background: #fff; border: 1px solid #dde1e7; border-radius: 6px; padding: .6rem .8rem; }
  .chart svg { display: block; width: 100%; height: 180px; } .legend span { margin-right: 1rem; white-space: nowrap; }
  .chart text { font-size: 11px; fill: #5b6575; } .grid { stroke: #eef0f3; } .axis { stroke: #c5cbd3; } .guide { stroke: #5b6575; stroke-dasharray: 3 3; }
  .readout { position: absolute; pointer-events: none; background: #fff; border: 1px solid #c5cbd3; border-radius: 4px; padding: .3rem .5rem; font-size: 12px; white-space: nowrap; box-shadow: 0 2px 6px #0002; }
  .readout .when { color: #5b6575; }
  .chart svg.swatch { display: inline; width: 12px; height: 8px; margin-right: .3rem; }
  table { border-collapse: collapse; width: 100%; background: #fff; border: 1px solid #dde1e7; }
  th, td { text-align: left; padding: .3rem .5rem; border-bottom: 1px solid #eef0f3; vertical-align: top; }
  th { background: #f0f2f5; font-weight: 600; } code { font-size: 12px; }
  .landed { color: #1a7f3c; } .failed, .rejected, .expired { color: #b3261e; } .held { color: #8a5a00; } .forwarded { color: #2c5fa8; }
  .why { color: #5b6575; font-size: 12px; } .empty { color: #8a93a3; font-style: italic; }
</style>
</head>
<body>
<h1>Slipway</h1>
<div id="status">connecting…</div>
<div class="charts">
  <div class="chart"><b>Submissions per second</b><svg id="chart-requests"></svg><div class="readout" id="readout-chart-requests" hidden></div><div class="legend" id="legend-requests"></div></div>
  <div class="chart"><b>Landed per second, by route</b><svg id="chart-landed"></svg><div class="readout" id="readout-chart-landed" hidden></div><div class="legend" id="legend-landed"></div></div>
  <div class="chart"><b>Median time to land (s), by route</b><svg id="chart-latency"></svg><div class="readout" id="readout-chart-latency" hidden></div><div class="legend" id="legend-latency"></div></div>
</div>
<h2>Latest submissions</h2>
<table><thead><tr><th>Received</th><th>Kind</th><th>Key</th><th>Route</th><th>Transactions</th></tr></thead><tbody id="latest"></tbody></table>
<h2>Keys: usage against limits</h2>
<table><thead><tr><th>Key</th><th>Name</th><th>Last second</th><th>Limit (tx/s)</th><th>Bundles/s limit</th><th>Accepted since start</th><th>Webhook</th></tr></thead><tbody id="keys"></tbody></table>
<h2>Landing report per key, last hour</h2>
<table><thead><tr><th>Key</th><th>Landed</th><th>Submitted</th><th>Landed</th><th>Failed on chain</th><th>Expired</th><th>Rejected</th><th>Pending</th><th>Refused</th><th>To land p50 / p99</th><th>Slots p50 / p99</th></tr></thead><tbody id="reports"></tbody></table>
<h2>Landing advice: calibration, last hour</h2>
<p id="calibration-summary" class="empty">no transaction scored yet: the advice scores while getLandingEstimate is asked</p>
<table><thead><tr><th>Chance predicted</th><th>Transactions</th><th>Mean predicted</th><th>Landed</th></tr></thead><tbody id="calibration"></tbody></table>
<h2>Upstreams</h2>
<table><thead><tr><th>Upstream</th><th>Sends</th><th>Failed</th><th>Median send time</th><th>Health</th></tr></thead><tbody id="upstreams"></tbody></table>
<script>
const COLORS = ['#2c5fa8', '#1a9c4a', '#c77c02', '#8e44ad', '#c0392b', '#16a085'];
const SLOTS = 300; // five minutes, one point a second, the newest at the right edge
const HEIGHT = 180; // the svg's height in CSS pixels (see .chart svg)
const MARGIN = { left: 50, right: 12, top: 8, bottom: 20 }; // room for the axes' labels
const history = [];
const charts = {}; // what each chart last drew, so that the readout can be redrawn with it
const pointerX = {}; // where the pointer is over each chart (px from its left), while it is there
const esc = (s) => String(s ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
const short = (s) => (s.length > 20 ? s.slice(0, 8) + '…' + s.slice(-8) : s);
// Three significant digits at most: enough to read, and 0.1 * 3 shows as 0.3.
const num = (v) => String(Number(v.toPrecision(3)));
const color = (i) => COLORS[i % COLORS.length];
// A series' colour key as SVG: a style attribute would need 'unsafe-inline' in the page's CSP.
const swatch = (i) => '<svg class="swatch" width="12" height="8"><rect width="12" height="8" rx="1" fill="' + color(i) + '"/></svg>';

// A round step (1, 2 or 5 times a power of ten) giving about four ticks up to max.
function niceStep(max) {
  const raw = max / 4;
  const power = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].find((m) => m * power >= raw * (1 - 1e-9)) * power;
}

// Pixel scales for one chart: the viewBox is the svg's own size, so that text is not stretched.
function frame(svg, series) {
  const width = Math.max(200, Math.round(svg.getBoundingClientRect().width));
  const all = series.flatMap((s) => s.values.filter((v) => v !== null));
  const step = niceStep(Math.max(1e-3, ...all));
  const top = Math.max(step, Math.ceil(Math.max(0, ...all) / step - 1e-9) * step);
  const plotWidth = width - MARGIN.left - MARGIN.right;
  const plotHeight = HEIGHT - MARGIN.top - MARGIN.bottom;
  return {
    width, step, top, plotWidth,
    x: (slot) => MARGIN.left + (slot * plotWidth) / (SLOTS - 1),
    y: (v) => MARGIN.top + plotHeight - (v / top) * plotHeight,
    // The history index under a pixel; history fills the right end of the slots.
    indexAt: (px) => Math.round(((px - MARGIN.left) / plotWidth) * (SLOTS - 1)) - (SLOTS - history.length),
  };
}

// Horizontal grid lines with the y axis's values in the chart's unit, vertical ones a minute apart.
function axes(box, unit) {
  const line = (cls, x1, y1, x2, y2) => '<line class="' + cls + '" x1="' + x1 + '" y1="' + y1 + '" x2="' + x2 + '" y2="' + y2 + '"/>';
  const bottom = box.y(0);
  let y = '', x = '';
  for (let v = 0; v <= box.top * (1 + 1e-9); v += box.step) {
    y += line('grid', MARGIN.left, box.y(v), box.width - MARGIN.right, box.y(v));
    y += '<text x="' + (MARGIN.left - 5) + '" y="' + (box.y(v) + 4) + '" text-anchor="end">' + num(v) + unit + '</text>';
  }
  for (let minutes = 0; minutes < SLOTS / 60; minutes++) {
    const at = box.x(SLOTS - 1 - minutes * 60);
    x += line('grid', at, MARGIN.top, at, bottom);
    x += '<text x="' + at + '" y="' + (HEIGHT - 5) + '" text-anchor="' + (minutes === 0 ? 'end' : 'middle') + '">' + (minutes === 0 ? 'now' : minutes + ' min ago') + '</text>';
  }
  return '<g class="y-axis">' + y + '</g><g class="x-axis">' + x + '</g>' +
    line('axis', MARGIN.left, MARGIN.top, MARGIN.left, bottom) + line('axis', MARGIN.left, bottom, box.width - MARGIN.right, bottom);
}

function draw(id, series, unit) {
  const svg = document.getElementById(id);
  const box = frame(svg, series);
  const offset = SLOTS - history.length;
  svg.setAttribute('viewBox', '0 0 ' + box.width + ' ' + HEIGHT);
  svg.innerHTML = axes(box, unit) + series.map((s, i) => {
    const points = s.values.map((v, x) => (v === null ? null : box.x(x + offset).toFixed(1) + ',' + box.y(v).toFixed(1))).filter((p) => p !== null);
    return '<polyline data-series="' + esc(s.name) + '" fill="none" stroke-width="2" stroke="' + color(i) + '" points="' + points.join(' ') + '"/>';
  }).join('') + '<line class="guide" visibility="hidden" y1="' + MARGIN.top + '" y2="' + box.y(0) + '"/>';
  charts[id] = { series, unit, box };
  showReadout(id);
  document.getElementById(id.replace('chart', 'legend')).innerHTML = series.length === 0
    ? '<span class="empty">nothing yet</span>'
    : series.map((s, i) => '<span>' + swatch(i) + esc(s.name) + ' ' + esc(s.label) + '</span>').join('');
}

// The guide and the values of every series at the second under the pointer; hidden when it is elsewhere.
// Called on each pointer move and after each redraw, so that a still pointer sees the figures change.
function showReadout(id) {
  const readout = document.getElementById('readout-' + id);
  const guide = document.querySelector('#' + id + ' .guide');
  const chart = charts[id];
  const px = pointerX[id];
  const index = chart === undefined || px === undefined ? -1 : Math.min(history.length - 1, Math.max(0, chart.box.indexAt(px)));
  if (index < 0 || history.length === 0) {
    readout.hidden = true;
    guide?.setAttribute('visibility', 'hidden');
    return;
  }
  const x = chart.box.x(index + SLOTS - history.length);
  guide.setAttribute('x1', x);
  guide.setAttribute('x2', x);
  guide.setAttribute('visibility', 'visible');
  const point = history[index];
  const ago = Math.round((history.at(-1).at - point.at) / 1000);
  readout.dataset.at = point.at;
  readout.innerHTML = '<div class="when">' + new Date(point.at).toLocaleTimeString() + ' · ' + (ago === 0 ? 'now' : ago + ' s ago') + '</div>' +
    (chart.series.length === 0 ? '<div class="empty">nothing yet</div>' : chart.series.map((s, i) => '<div data-series="' + esc(s.name) + '">' + swatch(i) +
      esc(s.name) + ' <b>' + (s.values[index] === null ? '—' : num(s.values[index]) + chart.unit) + '</b></div>').join(''));
  readout.hidden = false;
  // Beside the guide, on whichever side has room. An svg has no offsetLeft: measure it against its chart box.
  const svgBox = document.getElementById(id).getBoundingClientRect();
  const chartBox = readout.parentElement.getBoundingClientRect();
  const left = svgBox.left - chartBox.left - readout.parentElement.clientLeft;
  readout.style.top = svgBox.top - chartBox.top - readout.parentElement.clientTop + MARGIN.top + 'px';
  readout.style.left = (x > chart.box.width / 2 ? left + x - readout.offsetWidth - 10 : left + x + 10) + 'px';
}

function followPointer(id) {
  const svg = document.getElementById(id);
  svg.addEventListener('pointermove', (e) => { pointerX[id] = e.clientX - svg.getBoundingClientRect().left; showReadout(id); });
  svg.addEventListener('pointerleave', () => { delete pointerX[id]; showReadout(id); });
}

function render(tables) {
  const ops = ['sendTransaction', 'submitBatch', 'sendBundle'];
  draw('chart-requests', ops.map((op) => ({ name: op, values: history.map((p) => p.requests[op] ?? 0), label: '(' + (history.at(-1)?.requests[op] ?? 0) + '/s)' })), '/s');
  const routes = [...new Set(history.flatMap((p) => Object.keys(p.landed)))];
  draw('chart-landed', routes.map((r) => ({ name: r, values: history.map((p) => p.landed[r]?.count ?? 0), label: '' })), '/s');
  draw('chart-latency', routes.map((r) => ({ name: r, values: history.map((p) => p.landed[r]?.p50 ?? null), label: '' })), ' s');

  document.getElementById('latest').innerHTML = tables.latest.length === 0 ? '<tr><td colspan="5" class="empty">no submission yet</td></tr>' : tables.latest.map((s) =>
    '<tr data-kind="' + esc(s.kind) + '"><td>' + new Date(s.receivedAt).toLocaleTimeString() + '</td><td>' + esc(s.kind) + (s.antiMev ? ' (anti-MEV)' : '') +
    (s.bundleId ? '<br><code title="' + esc(s.bundleId) + '">' + esc(short(s.bundleId)) + '</code>' : '') + '</td><td><code>' + esc(s.keyId) + '</code></td><td>' + esc(s.routes.join(', ')) + '</td><td>' +
    s.transactions.map((t) => '<div data-signature="' + esc(t.signature) + '" data-state="' + esc(t.state) + '"><code title="' + esc(t.signature) + '">' + esc(short(t.signature)) + '</code> <b class="' + esc(t.state) + '">' + esc(t.state) + '</b>' +
      (t.slot !== null ? ' slot ' + t.slot : '') + (t.sends > 1 ? ' · ' + t.sends + ' sends' : '') +
      (t.reason || t.reasonCode ? '<div class="why">' + (t.reasonCode ? '<code class="reason-code">' + esc(t.reasonCode) + '</code> ' : '') + esc(t.reason ?? '') + '</div>' : '') + (t.lastHold ? '<div class="why">anti-MEV: ' + esc(t.lastHold) + '</div>' : '') + '</div>').join('') + '</td></tr>').join('');

  document.getElementById('keys').innerHTML = tables.keys.map((k) =>
    '<tr data-key="' + esc(k.id) + '"><td><code>' + esc(k.id) + '</code></td><td>' + esc(k.name) + '</td><td>' + k.lastSecond + ' tx/s</td><td>' + (k.tps ?? 'none') + '</td><td>' + (k.bundlesPerSecond ?? 'none') + '</td><td>' + k.total + '</td><td class="webhook">' + esc(k.webhook) + '</td></tr>').join('');
  // Counts are of transactions; landed % is of those that reached a final state (docs/API.md, getLandingReport).
  const pair = (p, unit) => (p.p50 === null ? '—' : p.p50 + ' / ' + p.p99 + unit);
  document.getElementById('reports').innerHTML = tables.reports.map((r) => {
    const t = r.transactions;
    return '<tr data-report-key="' + esc(r.keyId ?? '*') + '"><td>' + (r.keyId === null ? '<b>all keys</b>' : '<code>' + esc(r.keyId) + '</code>') + '</td><td class="percent">' +
      (r.landedPercent === null ? '—' : r.landedPercent.toFixed(2) + ' % of ' + r.final) + '</td>' +
      [t.submitted, t.landed, t.failedOnChain, t.expired, t.rejected, t.pending, r.refused].map((n) => '<td>' + n + '</td>').join('') +
      '<td>' + pair(r.ms, ' ms') + '</td><td>' + pair(r.slots, '') + '</td></tr>';
  }).join('');
  // The advice's calibration, all keys: per decile of the chance it predicted, the share that landed (docs/API.md).
  const calibration = tables.reports.find((r) => r.keyId === null)?.calibration;
  const percent = (v) => (v === null ? '—' : (v * 100).toFixed(1) + ' %');
  const summary = document.getElementById('calibration-summary');
  if (calibration !== undefined && calibration.samples > 0) {
    summary.className = '';
    summary.textContent = calibration.samples + ' transactions scored on landing within ' + calibration.withinSlots + ' slots; Brier score ' + calibration.brier +
      (calibration.maxErrorPoints === null ? '' : '; largest error over deciles of ' + calibration.minSamples + ' or more: ' + calibration.maxErrorPoints + ' points');
  }
  document.getElementById('calibration').innerHTML = (calibration?.deciles ?? []).filter((d) => d.samples > 0).map((d) =>
    '<tr data-decile="' + d.from + '"><td>' + Math.round(d.from * 100) + '–' + Math.round(d.to * 100) + ' %</td><td>' + d.samples + '</td><td>' + percent(d.predicted) + '</td><td>' + percent(d.observed) + '</td></tr>').join('');
  document.getElementById('upstreams').innerHTML = tables.upstreams.length === 0 ? '<tr><td colspan="5" class="empty">nothing sent yet</td></tr>' : tables.upstreams.map((u) =>
    '<tr data-upstream="' + esc(u.name) + '"><td>' + esc(u.name) + '</td><td>' + u.ok + '</td><td>' + u.errors + '</td><td>' + (u.p50Ms === null ? '—' : u.p50Ms.toFixed(u.p50Ms < 10 ? 2 : 0) + ' ms') + '</td><td>' +
    (u.openEndpoints.length === 0 ? '<span class="landed">in rotation</span>' : '<span class="failed">out of rotation: ' + esc(u.openEndpoints.join(', ')) + '</span>') + '</td></tr>').join('');
}

function connect() {
  const events = new EventSource('/dashboard/events' + location.search);
  const status = document.getElementById('status');
  events.addEventListener('init', (e) => {
    const { history: points, tables } = JSON.parse(e.data);
    history.splice(0, history.length, ...points);
    status.className = 'live'; status.textContent = 'live, updated every second';
    render(tables);
  });
  events.addEventListener('update', (e) => {
    const { point, tables } = JSON.parse(e.data);
    history.push(point);
    if (history.length > 300) history.shift();
    render(tables);
  });
  events.onerror = () => { status.className = 'lost'; status.textContent = 'connection lost; retrying…'; };
}
for (const id of ['chart-requests', 'chart-landed', 'chart-latency']) followPointer(id);
connect();
</script>
</body>
</html>
`;

const sha256 = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;
const inner = (tag: string) => DASHBOARD_PAGE.split(`<${tag}>`)[1]!.split(`</${tag}>`)[0]!;

/**
 * The page's security headers. Its one script and one style sheet are allowed by their hashes
 * and nothing else runs or loads; it may only connect back for its event stream. No referrer,
 * since the address may carry `?token=`.
 */
export const DASHBOARD_HEADERS = {
  'content-security-policy': [
    "default-src 'none'",
    `script-src ${sha256(inner('script'))}`,
    `style-src ${sha256(inner('style'))}`,
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; '),
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
} as const;
