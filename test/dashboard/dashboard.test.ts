/**
 * The live dashboard end to end in headless Chromium: the page follows the gateway's event
 * stream, and transactions submitted over HTTP appear in it with their outcome, in the
 * charts and in the key and upstream tables. A screenshot is saved to
 * test-results/dashboard.png.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Keypair, type Connection } from '@solana/web3.js';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
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
  await browser?.close();
  await gw?.close();
  if (profile !== undefined) fs.rmSync(profile, { recursive: true, force: true });
});

describe('/dashboard in Chromium', () => {
  it('shows submissions as they happen: their outcome, the charts, key usage and upstream health', async () => {
    await page.goto(`${gw.url}/dashboard`);
    await page.waitForSelector('#status.live', { timeout: 10_000 });

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
      /custom program error: 0x1/,
      'why it failed is shown',
    );
    assert.equal(await page.locator('tr[data-kind="batch"]').count(), 1);

    // The charts drew what came: a line per operation, with the send in it.
    const requestsLine = await page.getAttribute('#chart-requests polyline[data-series="sendTransaction"]', 'points');
    assert.ok((requestsLine ?? '').split(' ').length >= 2, 'the sendTransaction line has points');
    await page.waitForSelector('#chart-landed polyline[data-series="embedded"]', { timeout: 5_000 });
    assert.match((await page.textContent('#legend-requests')) ?? '', /sendTransaction/);

    const keyRow = page.locator(`tr[data-key="${gw.app.initialKey!.id}"]`);
    assert.match((await keyRow.textContent()) ?? '', /initial/);
    // Run in the page (a string: this file is not compiled against the DOM).
    await page.waitForFunction(
      `Number(document.querySelector('tr[data-key="${gw.app.initialKey!.id}"] td:last-child')?.textContent) >= 4`,
      undefined,
      { timeout: 5_000 },
    );
    assert.match((await page.textContent('tr[data-upstream="embedded"]')) ?? '', /in rotation/);

    fs.mkdirSync(path.dirname(SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    assert.ok(fs.statSync(SCREENSHOT).size > 10_000, 'a screenshot was saved');
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
