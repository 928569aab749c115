import nodemailer from 'nodemailer';
import type { EmailChannelConfig } from '../../config/types.js';
import { describeError } from '../../util/errors.js';
import { messageText } from '../notification-message.js';
import { NotificationDeliveryError, type NotificationChannel } from './channel.js';

/** E-mail over SMTP through nodemailer (STARTTLS when the server offers it; `secure` for implicit TLS on 465). */
export function emailChannel(config: EmailChannelConfig, timeoutMs: number): NotificationChannel {
  const { smtp } = config;
  const transport = nodemailer.createTransport({
    host: smtp.host,
    port: smtp.port,
    secure: smtp.secure,
    ...(smtp.username !== undefined ? { auth: { user: smtp.username, pass: smtp.password ?? '' } } : {}),
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
  });
  return {
    name: config.name,
    type: 'email',
    async send(message, signal) {
      signal.throwIfAborted();
      try {
        await transport.sendMail({ from: config.from, to: config.to, subject: `[freight-sync] ${message.title}`, text: messageText(message) });
      } catch (error) {
        throw new NotificationDeliveryError(config.name, `SMTP ${smtp.host}:${smtp.port}: ${describeError(error)}`, { cause: error });
      }
    },
    close: () => transport.close(),
  };
}
