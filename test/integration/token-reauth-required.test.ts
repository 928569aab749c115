import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { parseConfig } from '../../src/config/parse-config.js';
import type { SimulatorHandle } from '../../src/simulator/index.js';
import { runCli } from '../helpers/cli-process.js';
import { freePort, opsUrl, startDaemon, type RunningDaemon } from '../helpers/daemon-harness.js';
import { startSim, tempDir, issuePair } from '../helpers/pull-harness.js';

/**
 * Issue 11, item 4: an account whose token is truly lost — brokerage with only a pre-issued token
 * pair, and the refresh token invalidated out of band — is marked `reauth_required` in the state:
 * the daemon stops asking the token endpoints (no loop), every process on the state sees the mark
 * (`status`, `/readyz`, the metric, a concurrent `sync`), and a config with a new pair clears it.
 */
let sim: SimulatorHandle | undefined;
let daemon: RunningDaemon | undefined;
afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  await sim?.close();
  sim = undefined;
});

function rawConfig(handle: SimulatorHandle, pair: { accessToken: string; refreshToken: string }, listen: string): Record<string, unknown> {
  return {
    api: {
      variant: 'brokerage',
      baseUrl: handle.baseUrl,
      auth: pair,
      rateLimit: { requestsPerSecond: 500 },
      retry: { maxAttempts: 3, baseDelay: 'PT0.02S', maxDelay: 'PT0.1S', maxElapsed: 'PT10S' },
      timeout: 'PT5S',
    },
    state: { path: './state.sqlite' },
    log: { level: 'info', pretty: false },
    http: { enabled: true, listen, readyCacheTtl: 'PT0S' },
    sync: {
      defaults: { schedule: '* * * * * *', safetyLag: 'PT2S', initialFrom: handle.options.dataStart },
      streams: { loads: { enabled: true, sinks: ['drop'] }, customers: { enabled: true, sinks: ['drop'] } },
    },
    connectors: { drop: { type: 'csv', options: { directory: './out' } } },
  };
}

const tokenCalls = (handle: SimulatorHandle): number =>
  Object.values(handle.stats().byRoute['GET /generate-new-token'] ?? {}).reduce((n, c) => n + c, 0) +
  Object.values(handle.stats().byRoute['POST /retrieve-token'] ?? {}).reduce((n, c) => n + c, 0);

async function until(check: () => Promise<boolean> | boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('reauth_required: a truly lost token pauses the account instead of looping', () => {
  it('brokerage token pair, refresh token invalidated: marked, reported everywhere, bounded token calls, cleared by a new pair', async () => {
    sim = await startSim({ variant: 'brokerage', loads: 200, accessTokenTtlMs: 60_000 });
    const handle = sim;
    const dir = tempDir('token-reauth');
    const listen = `127.0.0.1:${await freePort()}`;
    const configFile = path.join(dir, 'freight-sync.yaml');
    const first = await issuePair(handle);
    fs.writeFileSync(configFile, stringify(rawConfig(handle, first, listen)));
    const config = parseConfig(rawConfig(handle, first, listen), { source: configFile, baseDir: dir });

    daemon = await startDaemon(config, dir, { runOnStart: true });
    const { app } = daemon;
    const runs = async (status?: 'ok' | 'failed') =>
      Number(
        (
          await app.db
            .selectFrom('runs')
            .select((eb) => eb.fn.countAll<number>().as('n'))
            .$if(status !== undefined, (q) => q.where('status', '=', status!))
            .executeTakeFirstOrThrow()
        ).n,
      );
    await until(async () => (await runs('ok')) >= 2, 20_000, 'a first successful pass');

    // The refresh token dies out of band, and the access token expires (server clock).
    handle.revokeRefreshTokens();
    handle.advance(61_000);
    await until(async () => (await app.client.tokens.reauthRequired()) !== undefined, 20_000, 'the reauth_required mark');
    const mark = await app.client.tokens.reauthRequired();
    expect(mark?.reason).toMatch(/refresh token was rejected \(HTTP 401\).*no clientId\/clientSecret/);

    // Several scheduled passes later (server clock moving on, access tokens long expired), no
    // token endpoint was asked again: the passes end at once with the typed error.
    const callsAtMark = tokenCalls(handle);
    const retiredAtMark = handle.stats().retiredRefreshTokenUses;
    const runsAtMark = await runs();
    for (let pass = 0; pass < 3; pass++) {
      handle.advance(61_000);
      const before = await runs();
      await until(async () => (await runs()) >= before + 2, 20_000, 'more scheduled passes');
    }
    expect(await runs()).toBeGreaterThanOrEqual(runsAtMark + 6);
    expect(tokenCalls(handle)).toBe(callsAtMark);
    expect(handle.stats().retiredRefreshTokenUses).toBe(retiredAtMark);
    expect(retiredAtMark).toBeLessThanOrEqual(1);
    const last = await app.stores.runs.last('loads');
    expect(last?.status).toBe('failed');
    expect(last?.error).toContain(`account ${app.client.tokens.account} needs re-authentication (reauth_required`);
    expect(last?.error).toMatch(/generate a new token pair/);

    // /readyz fails naming it; the metric is 1.
    const ready = await fetch(opsUrl(config, '/readyz'));
    expect(ready.status).toBe(503);
    const readyBody = (await ready.json()) as { checks: Record<string, { ok: boolean; error?: string }> };
    expect(readyBody.checks.api?.ok).toBe(false);
    expect(readyBody.checks.api?.error).toContain(`reauth_required: account ${app.client.tokens.account}`);
    const metrics = await (await fetch(opsUrl(config, '/metrics'))).text();
    expect(metrics).toContain(`freight_sync_reauth_required{account="${app.client.tokens.account}"} 1`);

    // Every process on the state sees it: `status` (human and --json), and a `sync` that ends at
    // once without asking the token endpoints.
    const statusJson = runCli(['status', '-c', configFile, '--json'], { cwd: dir });
    expect((await statusJson.exited).code, statusJson.stderr()).toBe(0);
    const report = JSON.parse(statusJson.stdout()) as { auth: { account: string; state: string; reauthRequired: { reason: string } | null } };
    expect(report.auth).toMatchObject({ account: app.client.tokens.account, state: 'reauth_required' });
    expect(report.auth.reauthRequired?.reason).toMatch(/refresh token was rejected/);
    const statusHuman = runCli(['status', '-c', configFile], { cwd: dir });
    expect((await statusHuman.exited).code, statusHuman.stderr()).toBe(0);
    expect(statusHuman.stdout()).toContain(`REAUTH REQUIRED: account ${app.client.tokens.account}`);
    const sync = runCli(['sync', '-c', configFile, '--stream', 'loads'], { cwd: dir });
    const syncExit = await sync.exited;
    expect(syncExit.code).not.toBe(0);
    expect(sync.stderr()).toMatch(/reauth_required/);
    expect(tokenCalls(handle)).toBe(callsAtMark);
    expect(handle.stats().retiredRefreshTokenUses).toBe(retiredAtMark);

    await daemon.stop();
    daemon = undefined;

    // The user pastes a new pair: the account (keyed by the configured pair) is clear and works.
    const second = await issuePair(handle);
    fs.writeFileSync(configFile, stringify(rawConfig(handle, second, listen)));
    const afterJson = runCli(['status', '-c', configFile, '--json'], { cwd: dir });
    expect((await afterJson.exited).code, afterJson.stderr()).toBe(0);
    expect((JSON.parse(afterJson.stdout()) as { auth: { state: string } }).auth.state).toBe('ok');
    const resumed = runCli(['sync', '-c', configFile, '--stream', 'loads'], { cwd: dir });
    const resumedExit = await resumed.exited;
    expect(resumedExit.code, resumed.stderr().slice(-1500)).toBe(0);
  }, 120_000);
});
