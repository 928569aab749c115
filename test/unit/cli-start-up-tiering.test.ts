import { describe, expect, it } from 'vitest';
import { holdOptimisingCompilerWhileLoading, releaseOptimisingCompiler } from '../../src/cli/start-up-tiering.js';

describe('TurboFan held back while the CLI loads its modules', () => {
  it('is left alone when node is told how to tier up, in any spelling', () => {
    for (const flag of ['--no-turbofan', '--turbofan', '--no_turbofan', '--jitless', '--no-opt', '--opt', '--always-turbofan', '--always_opt']) {
      const flags: string[] = [];
      expect(holdOptimisingCompilerWhileLoading(['--max-semi-space-size=4', flag], (f) => flags.push(f))).toBe(false);
      expect(flags).toEqual([]);
    }
  });

  it('flags that only look alike do not count', () => {
    const flags: string[] = [];
    expect(holdOptimisingCompilerWhileLoading(['--turbofan-inlining', '--optimize-for-size', '--no-maglev'], (f) => flags.push(f))).toBe(true);
    // A second hold while held does nothing; a release lets go once.
    expect(holdOptimisingCompilerWhileLoading([], (f) => flags.push(`second ${f}`))).toBe(false);
    releaseOptimisingCompiler();
    releaseOptimisingCompiler();
    expect(flags).toEqual(['--no-turbofan', '--turbofan']);
  });

  it('a release without a hold (main() run in-process, as tests do) sets nothing', () => {
    const flags: string[] = [];
    expect(holdOptimisingCompilerWhileLoading(['--jitless'], (f) => flags.push(f))).toBe(false);
    releaseOptimisingCompiler();
    expect(flags).toEqual([]);
  });
});
