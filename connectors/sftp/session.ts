import type SftpClient from 'ssh2-sftp-client';
import type { ConnectConfig, SFTPWrapper } from 'ssh2';
import type { ContractLogger as Logger } from '../../src/contracts/index.js';
import { sleep, throwIfAborted } from '../../src/util/abort.js';
import { backoffDelay } from '../../src/util/backoff.js';
import { describeError } from '../../src/util/errors.js';
import { loadDriver } from '../../src/util/optional-driver.js';
import { HostKeyMismatchError, SftpAuthError, SftpConnectionError, isHostKeyMismatchError, isSftpAuthError } from './errors.js';
import { fingerprintsEqual, sha256Fingerprint } from './host-key.js';

export interface SessionSettings {
  readonly host: string;
  readonly port: number;
  readonly username: string;
  readonly password?: string | undefined;
  readonly privateKey?: string | Buffer | undefined;
  readonly passphrase?: string | undefined;
  readonly hostKeySha256?: string | undefined;
  readonly allowUnpinnedHostKey: boolean;
  readonly keepaliveInterval: number;
  readonly readyTimeout: number;
  readonly reconnect: { readonly attempts: number; readonly baseDelay: number; readonly maxDelay: number };
}

export interface Connection {
  readonly client: SftpClient;
  readonly sftp: SFTPWrapper;
  /**
   * Settles with `operation`, or rejects as soon as this connection is lost. ssh2 does not always
   * call back pending SFTP requests when the socket dies (EPIPE), which would hang a write forever.
   */
  guard<T>(operation: Promise<T>): Promise<T>;
}

interface LiveConnection extends Connection {
  lose(reason: Error): void;
}

/** Messages and codes of a connection that broke (as opposed to a refused file operation). */
const CONNECTION_LOST = /ECONNRESET|EPIPE|ETIMEDOUT|ECONNABORTED|ERR_NOT_CONNECTED|No SFTP connection|No response from server|not connected|connection (lost|closed|ended)|Channel (closed|ended)|socket hang up|Keepalive timeout/i;

/**
 * One SSH connection with its SFTP channel, opened lazily and re-opened after it breaks.
 * `run` is the unit of retry: a whole batch write or inbox step is redone after a reconnect
 * (with exponential backoff), which is safe because every step is idempotent (deterministic names,
 * temp-then-rename, moves that check where the file is). Wrong host keys and wrong credentials
 * are never retried.
 */
export class SftpSession {
  readonly server: string;
  private current: LiveConnection | undefined;
  private connecting: Promise<Connection> | undefined;
  private closed = false;
  private privateKey: string | Buffer | undefined;

  constructor(
    private readonly settings: SessionSettings,
    private readonly logger: Logger,
  ) {
    this.server = `${settings.username}@${settings.host}:${settings.port}`;
    this.privateKey = settings.privateKey;
  }

  setPrivateKey(key: string | Buffer): void {
    this.privateKey = key;
  }

  /** The open connection, connecting (with retries) when there is none. */
  async connection(signal?: AbortSignal): Promise<Connection> {
    throwIfAborted(signal);
    if (this.closed) throw new SftpConnectionError(this.server, 'the connector is closed');
    if (this.current) return this.current;
    this.connecting ??= this.connectWithRetry(signal).finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  /** Runs `work`; when the connection breaks under it, reconnects with backoff and runs it again. */
  async run<T>(work: () => Promise<T>, signal: AbortSignal): Promise<T> {
    for (let attempt = 0; ; attempt += 1) {
      const before = this.current;
      try {
        return await work();
      } catch (error) {
        if (signal.aborted || this.closed || !this.isConnectionLoss(error, before)) throw error;
        this.dropConnection(this.current ?? (before as LiveConnection | undefined));
        if (attempt >= this.settings.reconnect.attempts) {
          throw new SftpConnectionError(this.server, `connection lost ${attempt + 1} time(s) in a row: ${describeError(error)}`, error);
        }
        const delay = this.backoff(attempt);
        this.logger.warn({ server: this.server, attempt: attempt + 1, delayMs: delay, err: error }, 'sftp connection lost; reconnecting');
        await sleep(delay, signal);
      }
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    const open = this.current ?? (await this.connecting?.catch(() => undefined));
    this.current = undefined;
    if (open) await endQuietly(open.client);
  }

  private isConnectionLoss(error: unknown, before: Connection | undefined): boolean {
    if (isHostKeyMismatchError(error) || isSftpAuthError(error)) return false;
    if (error instanceof SftpConnectionError) return true;
    // The connection we started with is gone: whatever failed, failed because of that.
    if (before !== undefined && this.current !== before) return true;
    let text = '';
    for (let e: unknown = error; e instanceof Error; e = e.cause) text += ` ${e.message} ${String((e as { code?: unknown }).code ?? '')}`;
    return CONNECTION_LOST.test(text);
  }

  private backoff(attempt: number): number {
    const { baseDelay, maxDelay } = this.settings.reconnect;
    // Full jitter keeps many daemons from reconnecting in lockstep after a server restart.
    return backoffDelay({ attempt, baseMs: baseDelay, maxMs: maxDelay });
  }

  private async connectWithRetry(signal?: AbortSignal): Promise<Connection> {
    for (let attempt = 0; ; attempt += 1) {
      try {
        return await this.connectOnce();
      } catch (error) {
        if (!(error instanceof SftpConnectionError) || this.closed || attempt >= this.settings.reconnect.attempts) throw error;
        const delay = this.backoff(attempt);
        this.logger.warn({ server: this.server, attempt: attempt + 1, delayMs: delay, err: error }, 'sftp connect failed; retrying');
        await sleep(delay, signal);
      }
    }
  }

  private async connectOnce(): Promise<Connection> {
    const { settings } = this;
    let presented: string | undefined;
    // Loaded on first connect: a daemon without SFTP connectors never loads ssh2, and an image
    // built without the driver fails here with a DriverMissingError naming the package (not retried).
    const { default: SftpClientClass } = await loadDriver('ssh2-sftp-client', 'the sftp connector', () => import('ssh2-sftp-client'));
    const client: SftpClient = new SftpClientClass(`freight-sync ${this.server}`, {
      // The library's defaults print to the console; route to the logger and forget the connection.
      error: (error: unknown) => {
        this.logger.warn({ server: this.server, err: error }, 'sftp connection error');
        this.dropConnection(this.current?.client === client ? this.current : undefined);
      },
      end: () => this.dropConnection(this.current?.client === client ? this.current : undefined),
      close: () => this.dropConnection(this.current?.client === client ? this.current : undefined),
    });
    const config: ConnectConfig = {
      host: settings.host,
      port: settings.port,
      username: settings.username,
      readyTimeout: settings.readyTimeout,
      keepaliveInterval: settings.keepaliveInterval,
      keepaliveCountMax: 3,
      hostVerifier: (key: Buffer) => {
        presented = sha256Fingerprint(key);
        return settings.hostKeySha256 === undefined || fingerprintsEqual(presented, settings.hostKeySha256);
      },
    };
    if (settings.password !== undefined) config.password = settings.password;
    if (this.privateKey !== undefined) config.privateKey = this.privateKey;
    if (settings.passphrase !== undefined) config.passphrase = settings.passphrase;

    let sftp: SFTPWrapper;
    try {
      sftp = await client.connect(config);
    } catch (error) {
      await endQuietly(client);
      if (settings.hostKeySha256 !== undefined && presented !== undefined && !fingerprintsEqual(presented, settings.hostKeySha256)) {
        throw new HostKeyMismatchError(`${settings.host}:${settings.port}`, settings.hostKeySha256, presented);
      }
      const message = describeError(error);
      if (/authentication methods failed|authentication failed/i.test(message)) {
        const methods = [this.privateKey !== undefined ? 'publickey' : '', settings.password !== undefined ? 'password' : ''].filter(Boolean).join(', ');
        throw new SftpAuthError(this.server, methods, error);
      }
      if (/private key|privateKey|passphrase|Cannot parse/i.test(message)) {
        // A key that cannot be read will not become readable by retrying.
        throw new SftpAuthError(this.server, `publickey (${message})`, error);
      }
      throw new SftpConnectionError(this.server, `cannot connect: ${message}`, error);
    }
    if (settings.hostKeySha256 === undefined) {
      this.logger.warn(
        { server: this.server, hostKeySha256: presented },
        `SFTP HOST KEY NOT VERIFIED for ${this.server} (allowUnpinnedHostKey: true): anyone on the network path can impersonate this server. Pin it with hostKeySha256: ${presented}`,
      );
    }
    if (this.closed) {
      await endQuietly(client);
      throw new SftpConnectionError(this.server, 'the connector is closed');
    }
    let lose!: (reason: Error) => void;
    const lost = new Promise<never>((_, reject) => {
      lose = reject;
    });
    lost.catch(() => undefined);
    this.current = { client, sftp, lose, guard: (operation) => Promise.race([operation, lost]) };
    return this.current;
  }

  private dropConnection(connection: LiveConnection | undefined): void {
    if (!connection || this.current !== connection) return;
    this.current = undefined;
    connection.lose(new SftpConnectionError(this.server, 'connection lost'));
    void endQuietly(connection.client);
  }
}

/** `end()` waits for a `close` event that never comes when the socket is already gone: bound it. */
async function endQuietly(client: SftpClient): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    client.end().catch(() => undefined),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, 2000);
      timer.unref();
    }),
  ]);
  clearTimeout(timer);
}
