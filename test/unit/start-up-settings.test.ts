import { describe, expect, it } from 'vitest';
import { commandOf, describeStartUpSettings, GLIBC_MALLOC_SETTINGS, mistypedStartUpSwitches, planStartUpSettings, type StartUpSituation } from '../../src/cli/start-up-settings.js';

const BIN = ['/usr/bin/node', '/usr/lib/node_modules/freight-sync/dist/src/cli/bin.js'];
const MALLOC = Object.entries(GLIBC_MALLOC_SETTINGS).map(([name, value]) => `${name}=${value}`);

/** A Node 22 (the image's: no Maglev built in) unless overridden; NODE_24 is one with Maglev. */
function situation(args: string[], overrides: Partial<StartUpSituation> = {}): StartUpSituation {
  return { argv: [...BIN, ...args], startedAsCli: true, execArgv: [], env: { PATH: '/usr/bin' }, platform: 'linux', nodeMajor: 22, canExecve: true, glibcVersion: () => '2.36', maglevBuiltIn: false, ...overrides };
}
const NODE_24: Partial<StartUpSituation> = { nodeMajor: 24, maglevBuiltIn: true };

describe('commandOf', () => {
  it('finds the command after global options, skipping the values of those that take one', () => {
    expect(commandOf([...BIN, 'run'])).toBe('run');
    expect(commandOf([...BIN, '-c', 'run.yaml', 'status'])).toBe('status');
    expect(commandOf([...BIN, '--config', 'x.yaml', '--log-level', 'debug', '--account', 'acme', 'backfill', '--from', '2026-01-01'])).toBe('backfill');
    expect(commandOf([...BIN, '--config=x.yaml', 'sync'])).toBe('sync');
    expect(commandOf([...BIN, '--help'])).toBeUndefined();
    expect(commandOf([...BIN])).toBeUndefined();
  });
});

describe('planStartUpSettings', () => {
  it('re-executes a long command on Node ≥ 22 with the malloc settings, the mark and the young generation cap, keeping the rest', () => {
    for (const command of ['run', 'sync', 'backfill', 'push', 'reconcile', 'demo', 'state']) {
      const plan = planStartUpSettings(situation(['-c', 'f.yaml', command], { execArgv: ['--enable-source-maps'] }));
      expect(plan).toEqual({
        reexecute: true,
        env: { PATH: '/usr/bin', ...GLIBC_MALLOC_SETTINGS, FREIGHT_SYNC_REEXECUTED: '1' },
        execArgv: ['--enable-source-maps', '--max-semi-space-size=4'],
        gives: [...MALLOC, '--max-semi-space-size=4'],
      });
    }
  });

  it('gives the cap FREIGHT_SYNC_SEMI_SPACE_MIB asks for, none with 0, and leaves a cap given to node alone', () => {
    expect(planStartUpSettings(situation(['run'], { env: { FREIGHT_SYNC_SEMI_SPACE_MIB: '8' } }))).toMatchObject({ execArgv: ['--max-semi-space-size=8'] });
    expect(planStartUpSettings(situation(['run'], { env: { FREIGHT_SYNC_SEMI_SPACE_MIB: '0' } }))).toMatchObject({ reexecute: true, execArgv: [], gives: MALLOC });
    expect(planStartUpSettings(situation(['run'], { execArgv: ['--max-semi-space-size=2'] }))).toMatchObject({ execArgv: ['--max-semi-space-size=2'], gives: MALLOC });
    expect(planStartUpSettings(situation(['run'], { env: { NODE_OPTIONS: '--max-semi-space-size=16' } }))).toMatchObject({ execArgv: [], gives: MALLOC });
  });

  it('on Node 20 and 21 the young generation needs no flag (young-generation.ts holds it at run time)', () => {
    expect(planStartUpSettings(situation(['run'], { nodeMajor: 21 }))).toMatchObject({ execArgv: [], gives: MALLOC });
  });

  it('keeps malloc tuning the environment chose, whole, and still adds a missing cap', () => {
    expect(planStartUpSettings(situation(['run'], { env: { MALLOC_ARENA_MAX: '4' } }))).toEqual({
      reexecute: true,
      env: { MALLOC_ARENA_MAX: '4', FREIGHT_SYNC_REEXECUTED: '1' },
      execArgv: ['--max-semi-space-size=4'],
      gives: ['--max-semi-space-size=4'],
    });
    expect(planStartUpSettings(situation(['run'], { env: { MALLOC_TOP_PAD_: '0' } }))).toMatchObject({ gives: ['--max-semi-space-size=4'] });
    expect(planStartUpSettings(situation(['run'], { env: { GLIBC_TUNABLES: 'glibc.malloc.arena_max=8' } }))).toMatchObject({ gives: ['--max-semi-space-size=4'] });
    // Tunables of something else are not a malloc choice.
    expect(planStartUpSettings(situation(['run'], { env: { GLIBC_TUNABLES: 'glibc.pthread.rseq=0' } }))).toMatchObject({ gives: [...MALLOC, '--max-semi-space-size=4'] });
  });

  it('stays when nothing is missing: the container image (its environment and entrypoint flag), or both switched off', () => {
    const image = situation(['run'], { env: { ...GLIBC_MALLOC_SETTINGS }, execArgv: ['--max-semi-space-size=4'] });
    expect(planStartUpSettings(image)).toMatchObject({ reexecute: false, why: expect.stringContaining('nothing missing') });
    const off = situation(['run'], { env: { FREIGHT_SYNC_GLIBC_MALLOC: 'off', FREIGHT_SYNC_SEMI_SPACE_MIB: '0' } });
    expect(planStartUpSettings(off)).toEqual({ reexecute: false, why: expect.stringContaining('FREIGHT_SYNC_GLIBC_MALLOC=off') });
    // An unknown switch value leaves malloc alone too; a Node 20 needs no flag.
    expect(planStartUpSettings(situation(['run'], { env: { FREIGHT_SYNC_GLIBC_MALLOC: 'yes' }, nodeMajor: 20 }))).toMatchObject({ reexecute: false, why: expect.stringContaining('neither auto nor off') });
    expect(planStartUpSettings(situation(['run'], { env: { FREIGHT_SYNC_GLIBC_MALLOC: ' OFF ' }, nodeMajor: 20 }))).toMatchObject({ reexecute: false });
  });

  it('gives no malloc settings without glibc, and still the cap', () => {
    expect(planStartUpSettings(situation(['run'], { glibcVersion: () => undefined }))).toMatchObject({ reexecute: true, gives: ['--max-semi-space-size=4'] });
    expect(planStartUpSettings(situation(['run'], { platform: 'darwin' }))).toMatchObject({ reexecute: true, gives: ['--max-semi-space-size=4'] });
    expect(planStartUpSettings(situation(['run'], { platform: 'darwin', nodeMajor: 20 }))).toMatchObject({ reexecute: false, why: expect.stringContaining('no glibc (darwin)') });
  });

  it('leaves short commands, help and a missing command alone, never re-executes twice, nor where it cannot', () => {
    for (const args of [['status'], ['validate-config'], ['--help'], [], ['-c', 'run', 'check']]) {
      expect(planStartUpSettings(situation(args))).toMatchObject({ reexecute: false, why: expect.stringContaining('short command') });
    }
    expect(planStartUpSettings(situation(['run'], { env: { FREIGHT_SYNC_REEXECUTED: '1' } }))).toMatchObject({ reexecute: false });
    expect(planStartUpSettings(situation(['run'], { canExecve: false }))).toMatchObject({ reexecute: false, why: expect.stringContaining('process.execve') });
  });

  it('never re-executes a process that is not the CLI itself (a test runner started as `vitest run` importing bin.js)', () => {
    const vitest = situation([], { argv: ['/usr/bin/node', '/app/node_modules/vitest/vitest.mjs', 'run'], startedAsCli: false });
    expect(planStartUpSettings(vitest)).toEqual({ reexecute: false, why: 'not started as the freight-sync command' });
  });

  it('where node has Maglev (Node 24), adds --no-maglev after the cap, and stays only once the flags of the image include it', () => {
    expect(planStartUpSettings(situation(['run'], { ...NODE_24, execArgv: ['--enable-source-maps'] }))).toEqual({
      reexecute: true,
      env: { PATH: '/usr/bin', ...GLIBC_MALLOC_SETTINGS, FREIGHT_SYNC_REEXECUTED: '1' },
      execArgv: ['--enable-source-maps', '--max-semi-space-size=4', '--no-maglev'],
      gives: [...MALLOC, '--max-semi-space-size=4', '--no-maglev'],
    });
    const image = { ...NODE_24, env: { ...GLIBC_MALLOC_SETTINGS } };
    expect(planStartUpSettings(situation(['run'], { ...image, execArgv: ['--max-semi-space-size=4'] }))).toMatchObject({ reexecute: true, execArgv: ['--max-semi-space-size=4', '--no-maglev'], gives: ['--no-maglev'] });
    expect(planStartUpSettings(situation(['run'], { ...image, execArgv: ['--max-semi-space-size=4', '--no-maglev'] }))).toMatchObject({ reexecute: false, why: expect.stringContaining('nothing missing') });
  });

  it('leaves Maglev as V8 has it with FREIGHT_SYNC_MAGLEV=on, an unknown value, or a node flag that names it', () => {
    const image = { ...NODE_24, env: { ...GLIBC_MALLOC_SETTINGS }, execArgv: ['--max-semi-space-size=4'] };
    expect(planStartUpSettings(situation(['run'], { ...image, env: { ...image.env, FREIGHT_SYNC_MAGLEV: ' On ' } }))).toMatchObject({ reexecute: false, why: expect.stringContaining('FREIGHT_SYNC_MAGLEV=on') });
    expect(planStartUpSettings(situation(['run'], { ...image, env: { ...image.env, FREIGHT_SYNC_MAGLEV: 'no' } }))).toMatchObject({ reexecute: false, why: expect.stringContaining('neither off nor on') });
    for (const flag of ['--maglev', '--no-maglev', '--no_maglev', '--jitless', '--maglev-inlining']) {
      expect(planStartUpSettings(situation(['run'], { ...image, execArgv: [...image.execArgv, flag] })), flag).toMatchObject({ reexecute: false });
      expect(planStartUpSettings(situation(['run'], { ...image, env: { ...image.env, NODE_OPTIONS: flag } })), flag).toMatchObject({ reexecute: false });
    }
    // A flag that merely starts alike is not one of Maglev's.
    expect(planStartUpSettings(situation(['run'], { ...image, execArgv: [...image.execArgv, '--maglevity'] }))).toMatchObject({ reexecute: true, gives: ['--no-maglev'] });
    // FREIGHT_SYNC_MAGLEV=off is the default, spelled out.
    expect(planStartUpSettings(situation(['run'], { ...image, env: { ...image.env, FREIGHT_SYNC_MAGLEV: 'OFF' } }))).toMatchObject({ reexecute: true, gives: ['--no-maglev'] });
    // Without Maglev built in (Node 20, 22) there is nothing to switch off.
    expect(planStartUpSettings(situation(['run'], { env: { ...GLIBC_MALLOC_SETTINGS }, execArgv: ['--max-semi-space-size=4'] }))).toMatchObject({ reexecute: false, why: expect.stringContaining('no Maglev in this node') });
  });

  it('asks for the C library only when a re-execution is possible', () => {
    let asked = 0;
    const glibcVersion = () => {
      asked += 1;
      return '2.36';
    };
    planStartUpSettings(situation(['status'], { glibcVersion }));
    planStartUpSettings(situation(['run'], { glibcVersion, canExecve: false }));
    expect(asked).toBe(0);
    planStartUpSettings(situation(['run'], { glibcVersion }));
    expect(asked).toBe(1);
  });
});

describe('mistypedStartUpSwitches', () => {
  it('warns of each switch holding a value it does not know, naming it, and of nothing else', () => {
    expect(mistypedStartUpSwitches({ FREIGHT_SYNC_GLIBC_MALLOC: 'of', FREIGHT_SYNC_MAGLEV: 'false' })).toEqual([
      "FREIGHT_SYNC_GLIBC_MALLOC=of is neither auto nor off: glibc's malloc settings are left as the environment has them",
      'FREIGHT_SYNC_MAGLEV=false is neither off nor on: Maglev is left as V8 has it',
    ]);
    for (const value of [undefined, '', 'auto', 'off', ' OFF ', 'Auto']) expect(mistypedStartUpSwitches({ FREIGHT_SYNC_GLIBC_MALLOC: value })).toEqual([]);
    for (const value of [undefined, '', 'on', 'off', ' On ']) expect(mistypedStartUpSwitches({ FREIGHT_SYNC_MAGLEV: value })).toEqual([]);
  });
});

describe('describeStartUpSettings', () => {
  it('names each setting and how the process got it', () => {
    expect(describeStartUpSettings({ ...GLIBC_MALLOC_SETTINGS, FREIGHT_SYNC_REEXECUTED: '1' }, ['--max-semi-space-size=4', '--no-maglev'], undefined, true)).toBe(
      'start-up settings: MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=131072 MALLOC_TRIM_THRESHOLD_=131072 --max-semi-space-size=4 --no-maglev; re-executed with them',
    );
    expect(describeStartUpSettings({}, [], { reexecute: false, why: 'status: a short command' }, true)).toBe(
      'start-up settings: MALLOC_ARENA_MAX=unset MALLOC_MMAP_THRESHOLD_=unset MALLOC_TRIM_THRESHOLD_=unset --max-semi-space-size=unset maglev=on; not re-executed: status: a short command',
    );
    expect(describeStartUpSettings({}, ['--max-semi-space-size=4'], undefined, false)).toMatch(/--max-semi-space-size=4 maglev=not built in; as started$/);
  });
});
