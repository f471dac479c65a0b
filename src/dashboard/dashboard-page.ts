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
  .chart { background: #fff; border: 1px solid #dde1e7; border-radius: 6px; padding: .6rem .8rem; }
  .chart svg { width: 100%; height: 140px; } .legend span { margin-right: 1rem; white-space: nowrap; }
  .legend i { display: inline-block; width: .8rem; height: .25rem; margin-right: .3rem; vertical-align: middle; }
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
  <div class="chart"><b>Submissions per second</b><svg id="chart-requests" viewBox="0 0 600 140" preserveAspectRatio="none"></svg><div class="legend" id="legend-requests"></div></div>
  <div class="chart"><b>Landed per second, by route</b><svg id="chart-landed" viewBox="0 0 600 140" preserveAspectRatio="none"></svg><div class="legend" id="legend-landed"></div></div>
  <div class="chart"><b>Median time to land (s), by route</b><svg id="chart-latency" viewBox="0 0 600 140" preserveAspectRatio="none"></svg><div class="legend" id="legend-latency"></div></div>
</div>
<h2>Latest submissions</h2>
<table><thead><tr><th>Received</th><th>Kind</th><th>Key</th><th>Route</th><th>Transactions</th></tr></thead><tbody id="latest"></tbody></table>
<h2>Keys: usage against limits</h2>
<table><thead><tr><th>Key</th><th>Name</th><th>Last second</th><th>Limit (tx/s)</th><th>Bundles/s limit</th><th>Accepted since start</th></tr></thead><tbody id="keys"></tbody></table>
<h2>Upstreams</h2>
<table><thead><tr><th>Upstream</th><th>Sends</th><th>Failed</th><th>Median send time</th><th>Health</th></tr></thead><tbody id="upstreams"></tbody></table>
<script>
const COLORS = ['#2c5fa8', '#1a9c4a', '#c77c02', '#8e44ad', '#c0392b', '#16a085'];
const history = [];
const esc = (s) => String(s ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]);
const short = (s) => (s.length > 20 ? s.slice(0, 8) + '…' + s.slice(-8) : s);

function draw(id, series) {
  const svg = document.getElementById(id);
  const all = series.flatMap((s) => s.values.filter((v) => v !== null));
  const max = Math.max(1e-9, ...all) * 1.1;
  // Five minutes across, the newest second at the right edge.
  const offset = 300 - history.length;
  svg.innerHTML = series.map((s, i) => {
    const points = s.values.map((v, x) => (v === null ? null : (((x + offset) * 600) / 299).toFixed(1) + ',' + (140 - (v / max) * 135).toFixed(1))).filter((p) => p !== null);
    return '<polyline data-series="' + esc(s.name) + '" fill="none" stroke-width="2" stroke="' + COLORS[i % COLORS.length] + '" points="' + points.join(' ') + '"/>';
  }).join('');
  document.getElementById(id.replace('chart', 'legend')).innerHTML = series.length === 0
    ? '<span class="empty">nothing yet</span>'
    : series.map((s, i) => '<span><i style="background:' + COLORS[i % COLORS.length] + '"></i>' + esc(s.name) + ' ' + esc(s.label) + '</span>').join('');
}

function render(tables) {
  const ops = ['sendTransaction', 'submitBatch', 'sendBundle'];
  draw('chart-requests', ops.map((op) => ({ name: op, values: history.map((p) => p.requests[op] ?? 0), label: '(' + (history.at(-1)?.requests[op] ?? 0) + '/s)' })));
  const routes = [...new Set(history.flatMap((p) => Object.keys(p.landed)))];
  draw('chart-landed', routes.map((r) => ({ name: r, values: history.map((p) => p.landed[r]?.count ?? 0), label: '' })));
  draw('chart-latency', routes.map((r) => ({ name: r, values: history.map((p) => p.landed[r]?.p50 ?? null), label: '' })));

  document.getElementById('latest').innerHTML = tables.latest.length === 0 ? '<tr><td colspan="5" class="empty">no submission yet</td></tr>' : tables.latest.map((s) =>
    '<tr data-kind="' + esc(s.kind) + '"><td>' + new Date(s.receivedAt).toLocaleTimeString() + '</td><td>' + esc(s.kind) + (s.antiMev ? ' (anti-MEV)' : '') +
    (s.bundleId ? '<br><code title="' + esc(s.bundleId) + '">' + esc(short(s.bundleId)) + '</code>' : '') + '</td><td><code>' + esc(s.keyId) + '</code></td><td>' + esc(s.routes.join(', ')) + '</td><td>' +
    s.transactions.map((t) => '<div data-signature="' + esc(t.signature) + '" data-state="' + esc(t.state) + '"><code title="' + esc(t.signature) + '">' + esc(short(t.signature)) + '</code> <b class="' + esc(t.state) + '">' + esc(t.state) + '</b>' +
      (t.slot !== null ? ' slot ' + t.slot : '') + (t.sends > 1 ? ' · ' + t.sends + ' sends' : '') +
      (t.reason ? '<div class="why">' + esc(t.reason) + '</div>' : '') + (t.lastHold ? '<div class="why">anti-MEV: ' + esc(t.lastHold) + '</div>' : '') + '</div>').join('') + '</td></tr>').join('');

  document.getElementById('keys').innerHTML = tables.keys.map((k) =>
    '<tr data-key="' + esc(k.id) + '"><td><code>' + esc(k.id) + '</code></td><td>' + esc(k.name) + '</td><td>' + k.lastSecond + ' tx/s</td><td>' + (k.tps ?? 'none') + '</td><td>' + (k.bundlesPerSecond ?? 'none') + '</td><td>' + k.total + '</td></tr>').join('');
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
connect();
</script>
</body>
</html>
`;
