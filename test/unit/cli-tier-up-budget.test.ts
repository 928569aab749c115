import { describe, expect, it } from 'vitest';
import { DEFAULT_INTERRUPT_BUDGET_KIB, raiseInterruptBudget } from '../../src/cli/tier-up-budget.js';

/** The flags `raiseInterruptBudget` would give V8, and what it returns, for an environment, node arguments and V8 version. */
function run(env: NodeJS.ProcessEnv, nodeArgs: string[], v8: string): { kib: number | undefined; flags: string[]; warnings?: string[] } {
  const flags: string[] = [];
  const warnings: string[] = [];
  const kib = raiseInterruptBudget(env, nodeArgs, v8, (flag) => flags.push(flag), (message) => warnings.push(message));
  return warnings.length > 0 ? { kib, flags, warnings } : { kib, flags };
}

describe('the interrupt budget every freight-sync process starts with', () => {
  it("gives Node 20's V8 a budget 4× its own 66 KiB", () => {
    expect(DEFAULT_INTERRUPT_BUDGET_KIB).toBe(264);
    expect(run({}, [], '11.3.244.8-node.33')).toEqual({ kib: 264, flags: ['--interrupt-budget=270336'] });
  });

  it("sets nothing on V8 ≥ 12 (Node 22, 24), which has no interrupt budget; a budget asked for there is reported as ignored", () => {
    expect(run({}, [], '12.4.254.21-node.33')).toEqual({ kib: undefined, flags: [] });
    expect(run({}, [], '13.6.233.17-node.44')).toEqual({ kib: undefined, flags: [] });
    expect(run({ FREIGHT_SYNC_INTERRUPT_BUDGET_KIB: '264' }, [], '12.4.254.21-node.33')).toEqual({
      kib: undefined,
      flags: [],
      warnings: ['FREIGHT_SYNC_INTERRUPT_BUDGET_KIB=264 is ignored: V8 12.4.254.21-node.33 has no interrupt budget (Node 20\'s V8 has)'],
    });
    expect(run({ FREIGHT_SYNC_INTERRUPT_BUDGET_KIB: '0' }, [], '12.4.254.21-node.33')).toEqual({ kib: undefined, flags: [] });
  });

  it('the running V8 takes the flag it is given, with no complaint (the flag exists where it is set)', async () => {
    const { spawnSync } = await import('node:child_process');
    const flags: string[] = [];
    raiseInterruptBudget({}, [], process.versions.v8, (flag) => flags.push(flag));
    // Set in a child so this worker's own V8 is left as it was.
    for (const flag of flags) {
      const child = spawnSync(process.execPath, ['-e', `require('node:v8').setFlagsFromString(${JSON.stringify(flag)})`], { encoding: 'utf8' });
      expect(child.stderr).toBe('');
    }
  });

  it("FREIGHT_SYNC_INTERRUPT_BUDGET_KIB changes it; 0 or anything but a whole number leaves V8's own", () => {
    expect(run({ FREIGHT_SYNC_INTERRUPT_BUDGET_KIB: '200' }, [], '11.3.244')).toEqual({ kib: 200, flags: ['--interrupt-budget=204800'] });
    expect(run({ FREIGHT_SYNC_INTERRUPT_BUDGET_KIB: '' }, [], '11.3.244').kib).toBe(264);
    for (const value of ['0', '-5', '1.5', 'many']) expect(run({ FREIGHT_SYNC_INTERRUPT_BUDGET_KIB: value }, [], '11.3.244')).toEqual({ kib: undefined, flags: [] });
  });

  it("an --interrupt-budget given to node wins, in either spelling", () => {
    expect(run({}, ['--interrupt-budget=65536'], '11.3.244')).toEqual({ kib: undefined, flags: [] });
    expect(run({ FREIGHT_SYNC_INTERRUPT_BUDGET_KIB: '264' }, ['--interrupt_budget=65536'], '11.3.244')).toEqual({ kib: undefined, flags: [] });
  });
});
