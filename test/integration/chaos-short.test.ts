import { describe, expect, it } from 'vitest';
import { chaosSeed, shortChaos } from '../chaos/chaos-options.js';
import { runChaos } from '../chaos/run-chaos.js';

/**
 * The short chaos run inside `npm test`: a few SIGKILLs of the daemon (a child process) while the
 * simulator mutates, faults, rate-limits, expires tokens and runs a skewed clock, and creates
 * arrive from the inbox and the staging table; afterwards every sink equals the truth and every
 * ERP key exists exactly once. The long form is `npm run chaos`. CHAOS_SEED replays a run.
 */
const seed = chaosSeed();

describe(`chaos, short form (seed ${seed})`, () => {
  it('main: every sink equals the truth, outbound exactly once, no secret printed', async () => {
    const report = await runChaos(shortChaos(seed, 'main'), (line) => console.log(line));
    expect(report.kills).toBeGreaterThanOrEqual(3);
    expect(report.problems).toEqual([]);
    expect(report.secrets).toEqual([]);
    expect(report.ok, report.table).toBe(true);
  }, 180_000);
});
