import { existsSync } from 'node:fs';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { CONSOLE_PASSWORD, CONSOLE_USER, consoleRaw, seedDeadLetter } from '../helpers/console-fixtures.js';
import { freePort, opsUrl, startDaemon, type RunningDaemon } from '../helpers/daemon-harness.js';
import { outboundConfig, syncDirectory } from '../helpers/outbound-harness.js';
import { startSim, tempDir } from '../helpers/pull-harness.js';
import { requireService } from '../helpers/services.js';

const CHROMIUM = '/usr/bin/chromium';
const available = requireService(
  'Debian chromium (headless browser for the console test)',
  existsSync(CHROMIUM) ? { ok: true } : { ok: false, reason: `${CHROMIUM} not found (apt-get install chromium)` },
);

/** Reloads until `check` holds on the page (the outbound engine works on its own poll interval). */
async function reloadUntil(page: Page, check: () => Promise<boolean>, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${ms} ms on ${page.url()}`);
    await page.reload();
  }
}

/**
 * The console in a real headless Chromium against a running daemon (outbound on, simulator API):
 * the overview lists the streams, and a dead letter is retried by pressing its button (a real
 * form post, with the browser's own Origin and Sec-Fetch-Site) and then shows as done.
 */
describe.skipIf(!available)('web console in a browser', () => {
  let sim: SimulatorHandle;
  let daemon: RunningDaemon;
  let browser: Browser;
  let config: ReturnType<typeof outboundConfig>;

  beforeAll(async () => {
    sim = await startSim({ loads: 30, customers: 10, consignees: 5 });
    const dir = tempDir('console-browser');
    config = outboundConfig({ sim, dir, outbound: { pollInterval: 'PT0.2S' } });
    config = { ...config, http: { ...config.http, listen: `127.0.0.1:${await freePort()}`, console: consoleRaw() as never } };
    // Customer codes must resolve for the retried create to go through.
    await syncDirectory(config, dir);
    daemon = await startDaemon(config, dir);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--headless'] });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await daemon?.stop();
    await sim?.close();
  });

  it('lists the streams; a dead letter retried from the outbox page is sent and then shows as done', async () => {
    const deadId = await seedDeadLetter(daemon.app, 'ERP-BROWSER-1');
    const context = await browser.newContext({ httpCredentials: { username: CONSOLE_USER, password: CONSOLE_PASSWORD } });
    const page = await context.newPage();
    const blocked: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') blocked.push(message.text());
    });

    const response = await page.goto(opsUrl(config, '/'));
    expect(response?.status()).toBe(200);
    expect(new URL(page.url()).pathname).toBe('/console/');
    const streams = await page.locator('#streams tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-stream')));
    expect(streams.sort()).toEqual(['consignees', 'customers', 'loads']);
    // The stylesheet loaded under the CSP (nothing refused in the console).
    expect(await page.evaluate("getComputedStyle(document.querySelector('header')).display")).toBe('flex');

    // A stream's page charts its real runs (the directory sync before the daemon started): the
    // lag each run ended with and the records it delivered, as inline SVG.
    await page.getByRole('link', { name: 'customers', exact: true }).click();
    expect(await page.locator('svg.chart').count()).toBe(2);
    expect(await page.locator('svg.chart circle.dot').count()).toBeGreaterThan(0);
    expect(await page.locator('svg.chart rect.bar').count()).toBeGreaterThan(0);

    await page.locator('header nav').getByRole('link', { name: 'Outbox', exact: true }).click();
    const deadRow = page.locator(`#dead-letters tr[data-outbox="${deadId}"]`);
    await expect.poll(() => deadRow.count()).toBe(1);
    await deadRow.getByRole('button', { name: 'Retry' }).click();
    await page.waitForURL(/\/console\/outbox\?flash=/);
    expect(await page.locator('.flash').textContent()).toContain(`outbox #${deadId}`);

    const row = page.locator(`#commands tr[data-outbox="${deadId}"]`);
    await reloadUntil(page, async () => (await row.getAttribute('data-state')) === 'done', 30_000);
    expect(await page.locator(`#dead-letters tr[data-outbox="${deadId}"]`).count()).toBe(0);
    expect(await row.locator('td').nth(5).textContent()).toMatch(/\S/);
    expect((await daemon.app.stores.outbox.get(deadId))?.state).toBe('done');
    expect(blocked).toEqual([]);
    await context.close();
  }, 90_000);
});
