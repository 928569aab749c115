import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { register } from '../../src/cli/commands/simulate.js';

function program(): { cmd: Command; output: string[] } {
  const output: string[] = [];
  const cmd = new Command().exitOverride().configureOutput({ writeOut: (s) => output.push(s), writeErr: (s) => output.push(s) });
  register(cmd);
  for (const sub of cmd.commands) sub.exitOverride().configureOutput({ writeOut: (s) => output.push(s), writeErr: (s) => output.push(s) });
  return { cmd, output };
}

describe('freight-sync simulate', () => {
  it('documents its options in --help', async () => {
    const { cmd, output } = program();
    await expect(cmd.parseAsync(['node', 'x', 'simulate', '--help'])).rejects.toMatchObject({ exitCode: 0 });
    const help = output.join('');
    for (const flag of ['--variant', '--port', '--loads', '--seed', '--rate-limit', '--fault-rate', '--token-ttl', '--clock-offset', '--mutate-every', '--webhook-url', '--webhook-secret']) {
      expect(help).toContain(flag);
    }
  });

  it('rejects bad values before starting anything', async () => {
    const { cmd, output } = program();
    await expect(cmd.parseAsync(['node', 'x', 'simulate', '--fault-rate', '2'])).rejects.toMatchObject({ code: 'commander.invalidArgument' });
    expect(output.join('')).toMatch(/--fault-rate/);
    await expect(program().cmd.parseAsync(['node', 'x', 'simulate', '--variant', 'other'])).rejects.toMatchObject({ code: 'commander.invalidArgument' });
  });
});
