/**
 * The live dashboard end to end in headless Chromium: the page follows the gateway's event
 * stream, and transactions submitted over HTTP appear in it with their outcome, in the
 * charts (with their axes and a readout under the pointer, checked against the same event
 * stream read here) and in the key and upstream tables. A screenshot is saved to
 * test-results/dashboard.png.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Keypair, type Connection } from '@solana/web3.js';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import type { Point } from '../../src/dashboard/dashboard-feed';
import { startTestGateway, type TestGateway } from '../helpers/gateway';
import { rpc, submitBatch } from '../helpers/rpc';
import { connect, failingTransferTx, fundedKeypair, transferTx } from '../helpers/solana';

const CHROMIUM = '/usr/bin/chromium';
const SCREENSHOT = path.resolve(__dirname, '../../../test-results/dashboard.png');

let gw: TestGateway;
let connection: Connection;
let profile: string;
let browser: BrowserContext;
let page: Page;
/** Every chart point the feed has sent, by its time, read from /dashboard/events beside the page. */
const sent = new Map<number, Point>();
/** Frames of that stream that were not JSON (none expected; named in a failure). */
const unreadable: string[] = [];
const stopReading = new AbortController();

before(async () => {
  assert.ok(
    fs.existsSync(CHROMIUM),
    `${CHROMIUM} is missing: install Debian's chromium package (apt-get install chromium); .ci/run and npm test do when they can`,
  );
  gw = await startTestGateway();
  connection = connect(gw.url, gw.key);
  profile = fs.mkdtempSync(path.join(os.tmpdir(), 'slipway-chromium-'));
  browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
    viewport: { width: 1280, height: 1100 },
  });
  page = await browser.newPage();
});
after(async () => {
  stopReading.abort();
  await browser?.close();
  await gw?.close();
  if (profile !== undefined) fs.rmSync(profile, { recursive: true, force: true });
});

/** Reads the page's event stream from the gateway into `sent`, as the page gets it. */
async function readFeed(url: string): Promise<void> {
  const response = await fetch(`${url}/dashboard/events`, { signal: stopReading.signal });
  const decoder = new TextDecoder();
  let buffer = '';
  void (async () => {
    try {
      for await (const chunk of response.body!) {
        buffer += decoder.decode(chunk as Uint8Array, { stream: true });
        for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
          const [event, data] = buffer
            .slice(0, end)
            .split('\n')
            .map((line) => line.slice(line.indexOf(': ') + 2));
          buffer = buffer.slice(end + 2);
          let body: { history?: Point[]; point?: Point };
          try {
            body = JSON.parse(data!) as typeof body;
          } catch (error) {
            unreadable.push(`${String(error)}: ${buffer.slice(0, 200)}`);
            continue;
          }
          for (const point of event === 'init' ? (body.history ?? []) : body.point === undefined ? [] : [body.point])
            sent.set(point.at, point);
        }
      }
    } catch {
      // Aborted when the tests end.
    }
  })();
}

interface Readout {
  hidden: boolean;
  at: number;
  text: string;
  rows: Record<string, string>;
  guide: { visible: boolean; x: number };
  /** The x of each point of the chart's first line. */
  xs: number[];
}

/** The readout of a chart and its guide, read in one go (a redraw may come between two reads). */
async function readReadout(chart: string): Promise<Readout> {
  // A string: this file is not compiled against the DOM.
  return page.evaluate(`(() => {
    const r = document.getElementById('readout-${chart}');
    const guide = document.querySelector('#${chart} .guide');
    return {
      hidden: r.hidden, at: Number(r.dataset.at), text: r.textContent,
      rows: Object.fromEntries([...r.querySelectorAll('[data-series]')].map((e) => [e.dataset.series, e.textContent])),
      guide: { visible: guide.getAttribute('visibility') === 'visible', x: Number(guide.getAttribute('x1')) },
      xs: (document.querySelector('#${chart} polyline')?.getAttribute('points') ?? '').split(' ').map((p) => Number(p.split(',')[0])),
    };
  })()`);
}

/** Moves the pointer leftwards across a chart until its readout shows a second the feed sent for which `wanted` holds. */
async function hoverUntil(chart: string, wanted: (point: Point) => boolean): Promise<{ readout: Readout; point: Point; x: number }> {
  const box = (await page.locator(`#${chart}`).boundingBox())!;
  let readout: Readout | undefined;
  for (let x = box.width - 2; x > 52; x -= 1) {
    await page.mouse.move(box.x + x, box.y + box.height / 2);
    readout = await readReadout(chart);
    const point = sent.get(readout.at);
    if (!readout.hidden && point !== undefined && wanted(point)) return { readout, point, x };
  }
  assert.fail(`no second in ${chart}'s readout had what was wanted; the last read ${JSON.stringify(readout)}`);
}

/** A readout row's figure: "name 1.23/s" gives 1.23, after checking the name and the unit. */
function figure(row: string | undefined, name: string, unit: string): number {
  const match = new RegExp(`^${name} (\\d+(?:\\.\\d+)?)${unit.replace('/', '\\/')}$`).exec(row ?? '');
  assert.ok(match, `readout row ${JSON.stringify(row)} reads "${name} <number>${unit}"`);
  return Number(match[1]);
}

/** The y axis's labels in a chart, bottom up, as numbers, after checking each carries the unit. */
async function yTicks(chart: string, unit: string): Promise<number[]> {
  const labels = await page.locator(`#${chart} .y-axis text`).allTextContents();
  assert.ok(labels.length >= 2, `${chart} has y-axis labels: ${JSON.stringify(labels)}`);
  return labels.map((label) => {
    assert.ok(label.endsWith(unit) && /^\d+(\.\d+)?$/.test(label.slice(0, -unit.length)), `${chart}: "${label}" is a number in ${unit}`);
    return Number(label.slice(0, -unit.length));
  });
}

describe('/dashboard in Chromium', () => {
  it('shows submissions as they happen: their outcome, the charts, key usage and upstream health', async () => {
    await readFeed(gw.url);
    const refused: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) refused.push(message.text());
    });
    const response = (await page.goto(`${gw.url}/dashboard`))!;
    await page.waitForSelector('#status.live', { timeout: 10_000 });
    // A strict policy (no 'unsafe-inline', nothing from elsewhere) under which the page still runs whole.
    const policy = response.headers()['content-security-policy'] ?? '';
    assert.match(policy, /default-src 'none'/);
    assert.match(policy, /script-src 'sha256-[^']+'(;|$)/);
    assert.match(policy, /style-src 'sha256-[^']+'(;|$)/);
    assert.match(policy, /connect-src 'self'(;|$)/);
    assert.doesNotMatch(policy, /unsafe/);
    assert.equal(response.headers()['referrer-policy'], 'no-referrer');

    const alice = await fundedKeypair(connection);
    const poor = await fundedKeypair(connection, 1);
    const single = (
      await rpc(gw.url, gw.key, 'sendTransaction', [
        await transferTx(connection, alice, Keypair.generate().publicKey, 1_000_000),
        { encoding: 'base64' },
      ])
    ).body.result as string;
    const batch = (
      await submitBatch(gw.url, gw.key, [
        await transferTx(connection, alice, Keypair.generate().publicKey, 2_000_000),
        await transferTx(connection, alice, Keypair.generate().publicKey, 3_000_000),
      ])
    ).body.signatures as string[];
    const failing = (
      await rpc(gw.url, gw.key, 'sendTransaction', [
        await failingTransferTx(connection, poor, Keypair.generate().publicKey),
        { encoding: 'base64', skipPreflight: true },
      ])
    ).body.result as string;

    for (const signature of [single, ...batch])
      await page.waitForSelector(`[data-signature="${signature}"][data-state="landed"]`, { timeout: 15_000 });
    await page.waitForSelector(`[data-signature="${failing}"][data-state="failed"]`, { timeout: 15_000 });
    assert.match(
      (await page.textContent(`[data-signature="${failing}"] .why`)) ?? '',
      /^failed_on_chain .*custom program error: 0x1/,
      'why it failed is shown, with its outcome reason code',
    );
    assert.equal(await page.locator('tr[data-kind="batch"]').count(), 1);

    // The charts drew what came: a line per operation, with the send in it.
    const requestsLine = await page.getAttribute('#chart-requests polyline[data-series="sendTransaction"]', 'points');
    assert.ok((requestsLine ?? '').split(' ').length >= 2, 'the sendTransaction line has points');
    await page.waitForSelector('#chart-landed polyline[data-series="embedded"]', { timeout: 5_000 });
    assert.match((await page.textContent('#legend-requests')) ?? '', /sendTransaction/);

    // Every chart has a y axis with values in its unit, from 0 upwards, and minutes on the x axis.
    const charts = { 'chart-requests': '/s', 'chart-landed': '/s', 'chart-latency': ' s' };
    for (const [chart, unit] of Object.entries(charts)) {
      const ticks = await yTicks(chart, unit);
      assert.equal(ticks[0], 0, `${chart}'s axis starts at 0`);
      assert.ok(
        ticks.every((v, i) => i === 0 || v > ticks[i - 1]!),
        `${chart}'s ticks rise: ${ticks.join(', ')}`,
      );
      const times = await page.locator(`#${chart} .x-axis text`).allTextContents();
      assert.deepEqual(times, ['now', '1 min ago', '2 min ago', '3 min ago', '4 min ago'], `${chart}'s time axis`);
      assert.ok((await page.locator(`#${chart} .grid`).count()) >= ticks.length + times.length, `${chart} has grid lines`);
    }
    // The stream beside the page may be a second behind it: wait for the point with the sends.
    const sendsSeen = () => Math.max(...[...sent.values()].map((p) => p.requests.sendTransaction ?? 0));
    for (let waited = 0; sendsSeen() < 1 && waited < 5_000; waited += 100) await new Promise((resolve) => setTimeout(resolve, 100));
    const mostSends = sendsSeen();
    assert.ok(
      mostSends >= 1 && (await yTicks('chart-requests', '/s')).at(-1)! >= mostSends,
      `the axis reaches the highest send rate (${mostSends}/s; ${sent.size} points read, unreadable frames: ${unreadable.join(' | ') || 'none'})`,
    );

    // Under the pointer: a guide, the time, and each series' figure that second, as the feed sent it.
    const sends = await hoverUntil('chart-requests', (p) => (p.requests.sendTransaction ?? 0) > 0);
    assert.ok(sends.readout.guide.visible, 'the guide is shown');
    // On one of the line's points, the one under the pointer: points are about a pixel apart and the browser
    // may give the pointer's position in whole pixels, so "under" is within a spacing and a pixel.
    const { xs } = sends.readout;
    const onPoint = xs.find((x) => Math.abs(sends.readout.guide.x - x) < 0.1);
    assert.ok(onPoint !== undefined, `the guide (${sends.readout.guide.x}) is on a point of the line`);
    const spacing = (xs.at(-1)! - xs[0]!) / Math.max(1, xs.length - 1);
    const newest = xs.at(-1)!;
    assert.ok(
      Math.abs(onPoint - Math.min(sends.x, newest)) <= spacing + 1,
      `the guide (${onPoint}) is at the point under the pointer (${sends.x}; the newest point is at ${newest})`,
    );
    assert.match(sends.readout.text, /\d{1,2}:\d{2}:\d{2}.*(now|\d+ s ago)/, 'the readout gives the time');
    for (const op of ['sendTransaction', 'submitBatch', 'sendBundle'])
      assert.equal(figure(sends.readout.rows[op], op, '/s'), sends.point.requests[op], `${op} at ${sends.point.at}`);
    const landed = await hoverUntil('chart-landed', (p) => (p.landed.embedded?.count ?? 0) > 0);
    assert.equal(figure(landed.readout.rows.embedded, 'embedded', '/s'), landed.point.landed.embedded!.count);
    const latency = await hoverUntil('chart-latency', (p) => (p.landed.embedded?.p50 ?? null) !== null);
    const p50 = latency.point.landed.embedded!.p50!;
    const shown = figure(latency.readout.rows.embedded, 'embedded', ' s');
    assert.ok(Math.abs(shown - p50) <= p50 * 0.005, `median time to land: shown ${shown} s, sent ${p50} s`);
    // Taken with the readout up, then the pointer leaves and the readout goes.
    fs.mkdirSync(path.dirname(SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    await page.mouse.move(1, 1);
    assert.deepEqual(refused, [], 'the browser refused nothing the page does');
    assert.equal((await readReadout('chart-latency')).hidden, true, 'the readout hides when the pointer leaves');
    assert.equal((await readReadout('chart-latency')).guide.visible, false, 'so does the guide');

    const keyRow = page.locator(`tr[data-key="${gw.app.initialKey!.id}"]`);
    assert.match((await keyRow.textContent()) ?? '', /initial/);
    assert.equal(await keyRow.locator('td.webhook').textContent(), 'off');
    // Run in the page (a string: this file is not compiled against the DOM).
    await page.waitForFunction(
      `Number(document.querySelector('tr[data-key="${gw.app.initialKey!.id}"] td:nth-child(6)')?.textContent) >= 4`,
      undefined,
      { timeout: 5_000 },
    );
    assert.match((await page.textContent('tr[data-upstream="embedded"]')) ?? '', /in rotation/);

    // The key's landing report: 4 transactions submitted, 3 landed, 1 failed on chain: 75 % of 4 final, times known.
    const keyId = gw.app.initialKey!.id;
    // Polled from here: a string predicate the page had to evaluate later would need 'unsafe-eval', which the page's policy refuses.
    const percent = page.locator(`tr[data-report-key="${keyId}"] td.percent`);
    for (let waited = 0; (await percent.textContent({ timeout: 15_000 })) !== '75.00 % of 4'; waited += 100) {
      assert.ok(waited < 15_000, `the report row says ${await percent.textContent()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const cells = await page.locator(`tr[data-report-key="${keyId}"] td`).allTextContents();
    assert.deepEqual(cells.slice(2, 9), ['4', '3', '1', '0', '0', '0', '0'], cells.join(' | '));
    assert.match(cells[9]!, /^\d+ \/ \d+ ms$/);
    assert.match(cells[10]!, /^\d+ \/ \d+$/);
    assert.match((await page.textContent('tr[data-report-key="*"]')) ?? '', /all keys/);

    assert.ok(fs.statSync(SCREENSHOT).size > 10_000, 'a screenshot was saved');
  });

  it("shows the landing advice's calibration once it has scored transactions: per decile, what it predicted and what landed", async () => {
    assert.match((await page.textContent('#calibration-summary')) ?? '', /no transaction scored yet/);
    // Asking for advice starts the advice following the market and scoring what is sent from then on.
    assert.equal(
      (await rpc(gw.url, gw.key, 'getLandingEstimate', [{ accountKeys: [], computeUnits: 600, probability: 0.9, withinSlots: 8 }])).status,
      200,
    );
    const alice = await fundedKeypair(connection);
    for (let i = 0; i < 6; i++) {
      const answer = await rpc(gw.url, gw.key, 'sendTransaction', [
        await transferTx(connection, alice, Keypair.generate().publicKey, 1_000_000 + i),
        { encoding: 'base64' },
      ]);
      assert.equal(answer.body.error, undefined, JSON.stringify(answer.body));
      await new Promise((resolve) => setTimeout(resolve, 400));
    }
    const summary = page.locator('#calibration-summary');
    for (let waited = 0; !/transactions scored/.test((await summary.textContent()) ?? ''); waited += 200) {
      assert.ok(waited < 20_000, `the calibration says ${await summary.textContent()}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const scored = Number(
      /^(\d+) transactions scored on landing within 8 slots; Brier score [0-9.]+/.exec((await summary.textContent())!)![1],
    );
    const rows = page.locator('#calibration tr');
    assert.ok((await rows.count()) >= 1, 'a decile row');
    // Each decile shown: its range, its transactions, the mean chance predicted and the share landed within 8 slots (of 50 ms
    // here: some take longer); the rows add up to the transactions scored.
    let total = 0;
    for (let i = 0; i < (await rows.count()); i++) {
      const [range, samples, predicted, landed] = await rows.nth(i).locator('td').allTextContents();
      const [from, to] = /^(\d+)–(\d+) %$/.exec(range!)!.slice(1).map(Number);
      assert.equal(to! - from!, 10, range);
      const mean = Number(/^([0-9.]+) %$/.exec(predicted!)![1]);
      assert.ok(mean >= from! && mean <= to!, `${predicted} in ${range}`);
      assert.match(landed!, /^[0-9.]+ %$/);
      total += Number(samples);
    }
    assert.equal(total, scored);
  });

  it("is the operator's: refused to another machine without the token, and opened with ?token=", async () => {
    const guarded = await startTestGateway({ dashboardToken: 'look-but-do-not-touch' });
    try {
      const without = await fetch(`${guarded.url}/dashboard`);
      assert.equal(without.status, 401);
      const other = await browser.newPage();
      await other.goto(`${guarded.url}/dashboard?token=look-but-do-not-touch`);
      await other.waitForSelector('#status.live', { timeout: 10_000 });
      await other.close();
    } finally {
      await guarded.close();
    }
  });
});
