import { randomBytes } from 'node:crypto';
import os from 'node:os';

/** A lease holder's id: `host:pid:random` (the random part tells two incarnations under one pid apart). */
export function newHolderId(): string {
  return `${os.hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
}

/** The host and pid of a holder id (`?` and 0 when it is not one of ours). */
export function parseHolderId(holder: string): { host: string; pid: number } {
  const [host = '?', pid = '0'] = holder.split(':');
  return { host, pid: Number(pid) || 0 };
}

/** "sync on host:pid" for logs and refusals; the bare "host:pid" when the command is unknown (rows of older versions). */
export function describeHolder(holder: string, command: string | null | undefined): string {
  const { host, pid } = parseHolderId(holder);
  return `${command ?? 'a process'} on ${host}:${pid}`;
}
