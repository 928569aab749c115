import { describe, expect, it, vi } from 'vitest';
import type { EmailChannelConfig } from '../../src/config/types.js';

const loaded = vi.hoisted(() => ({ count: 0, sent: [] as unknown[] }));

vi.mock('nodemailer', () => {
  loaded.count += 1;
  return {
    default: {
      createTransport: () => ({
        sendMail: async (mail: unknown) => {
          loaded.sent.push(mail);
        },
        close: () => undefined,
      }),
    },
  };
});

describe('e-mail channel', () => {
  it('loads nodemailer at its first message, not with the command (issue 14: ~4 MiB a backfill carried for nothing)', async () => {
    const { emailChannel } = await import('../../src/notify/channels/email.js');
    const config = { name: 'ops', type: 'email', smtp: { host: 'smtp.test', port: 587, secure: false }, from: 'sync@test', to: ['ops@test'] } as EmailChannelConfig;
    const channel = emailChannel(config, 1000);
    expect(loaded.count).toBe(0);
    const message = { event: 'opened', title: 'Stream failing', items: [], link: '/', at: '2026-01-01T00:00:00Z' } as never;
    await channel.send(message, new AbortController().signal);
    await channel.send(message, new AbortController().signal);
    expect(loaded.count).toBe(1);
    expect(loaded.sent).toHaveLength(2);
    expect(loaded.sent[0]).toMatchObject({ from: 'sync@test', to: ['ops@test'], subject: '[freight-sync] Stream failing' });
    await channel.close?.();
  });
});
