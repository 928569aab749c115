import type { Transporter } from 'nodemailer';
import type { EmailChannelConfig } from '../../config/types.js';
import { describeError } from '../../util/errors.js';
import { messageText } from '../notification-message.js';
import { NotificationDeliveryError, type NotificationChannel } from './channel.js';

/**
 * E-mail over SMTP through nodemailer (STARTTLS when the server offers it; `secure` for implicit
 * TLS on 465). nodemailer is loaded at the first message, not with the command: it is ~4 MiB of
 * heap that a backfill, or a daemon that never has to write, would carry for nothing (issue 14).
 */
export function emailChannel(config: EmailChannelConfig, timeoutMs: number): NotificationChannel {
  const { smtp } = config;
  let transport: Promise<Transporter> | undefined;
  const open = async (): Promise<Transporter> => {
    const { default: nodemailer } = await import('nodemailer');
    return nodemailer.createTransport({
      host: smtp.host,
      port: smtp.port,
      secure: smtp.secure,
      ...(smtp.username !== undefined ? { auth: { user: smtp.username, pass: smtp.password ?? '' } } : {}),
      connectionTimeout: timeoutMs,
      greetingTimeout: timeoutMs,
      socketTimeout: timeoutMs,
    });
  };
  return {
    name: config.name,
    type: 'email',
    async send(message, signal) {
      signal.throwIfAborted();
      try {
        // A failed load is tried again at the next message.
        const mailer = await (transport ??= open().catch((error: unknown) => {
          transport = undefined;
          throw error;
        }));
        await mailer.sendMail({ from: config.from, to: config.to, subject: `[freight-sync] ${message.title}`, text: messageText(message) });
      } catch (error) {
        throw new NotificationDeliveryError(config.name, `SMTP ${smtp.host}:${smtp.port}: ${describeError(error)}`, { cause: error });
      }
    },
    async close() {
      if (transport) (await transport.catch(() => undefined))?.close();
    },
  };
}
