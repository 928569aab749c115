import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { chmod, chown, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { ServiceProbe } from './services.js';

const run = promisify(execFile);

const SSHD = '/usr/sbin/sshd';
/** A dedicated local account for the loopback sshd; created on first use (needs root). */
export const SFTP_TEST_USER = 'freightsftp';
/**
 * Fixed, because test files run in parallel workers that share the account. The account only
 * matters to this loopback-only sshd (the system sshd, if any, is not configured for it).
 */
export const SFTP_TEST_PASSWORD = 'freight-sftp-test-Pw1';
const TEST_HOME = '/tmp/freightsftp-home';

export interface SshdHandle {
  readonly host: string;
  readonly port: number;
  readonly username: string;
  readonly password: string;
  /** The server's host key fingerprint as `ssh-keygen -l` prints it. */
  readonly hostKeySha256: string;
  /** A client key listed in the server's authorized keys (OpenSSH format, no passphrase). */
  readonly privateKeyPath: string;
  readonly privateKey: string;
  /** A passphrase-protected client key, also authorized, and its passphrase. */
  readonly encryptedKeyPath: string;
  readonly passphrase: string;
  /** A key that is NOT authorized. */
  readonly strangerKeyPath: string;
  /** A folder owned by the test user, for the tests' remote paths (absolute; also readable locally). */
  readonly root: string;
  stop(): Promise<void>;
}

/** Whether a real sshd can be started here: the binary, ssh-keygen, and root (for the test user). */
export function probeSshd(): ServiceProbe {
  if (!existsSync(SSHD)) return { ok: false, reason: `${SSHD} not found (apt-get install openssh-server)` };
  if (!existsSync('/usr/bin/ssh-keygen')) return { ok: false, reason: 'ssh-keygen not found' };
  if (process.getuid?.() !== 0) return { ok: false, reason: 'tests must run as root to create the local test user for password auth' };
  return { ok: true };
}

async function keygen(file: string, passphrase = ''): Promise<void> {
  await run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', passphrase, '-C', path.basename(file), '-f', file]);
}

export async function fingerprintOf(publicKeyFile: string): Promise<string> {
  const { stdout } = await run('ssh-keygen', ['-l', '-E', 'sha256', '-f', publicKeyFile]);
  const match = /SHA256:[A-Za-z0-9+/]+/.exec(stdout);
  if (!match) throw new Error(`ssh-keygen printed no fingerprint for ${publicKeyFile}: ${stdout}`);
  return match[0];
}

async function ensureTestUser(): Promise<{ uid: number; gid: number }> {
  const lookup = async () => {
    const { stdout } = await run('id', ['-u', SFTP_TEST_USER]);
    const { stdout: g } = await run('id', ['-g', SFTP_TEST_USER]);
    return { uid: Number(stdout.trim()), gid: Number(g.trim()) };
  };
  await mkdir(TEST_HOME, { recursive: true });
  let ids;
  try {
    ids = await lookup();
  } catch {
    try {
      await run('useradd', ['-M', '-d', TEST_HOME, '-s', '/bin/sh', SFTP_TEST_USER]);
    } catch (error) {
      // A parallel worker created it first.
      if (!/already exists/.test(String((error as { stderr?: string }).stderr))) throw error;
    }
    ids = await lookup();
  }
  // Idempotent, and unlocks the account (useradd creates it locked, which UsePAM no refuses).
  await new Promise<void>((resolve, reject) => {
    const child = spawn('chpasswd', [], { stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`chpasswd failed (${code}): ${stderr}`))));
    child.stdin.end(`${SFTP_TEST_USER}:${SFTP_TEST_PASSWORD}\n`);
  });
  await chown(TEST_HOME, ids.uid, ids.gid);
  return ids;
}

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * Starts `/usr/sbin/sshd -D -e -f <config>` on a free loopback port with a fresh host key, password
 * and key auth for the test user, and the in-process SFTP server. Everything lives in a temp dir.
 */
export async function startSshd(): Promise<SshdHandle> {
  const probe = probeSshd();
  if (!probe.ok) throw new Error(probe.reason);
  const { uid, gid } = await ensureTestUser();
  // Privilege separation directory; sshd refuses to start without it.
  await mkdir('/run/sshd', { recursive: true, mode: 0o755 });

  const dir = await mkdtemp(path.join(os.tmpdir(), 'freight-sshd-'));
  await chmod(dir, 0o755);
  const hostKey = path.join(dir, 'host_ed25519');
  const clientKey = path.join(dir, 'client_ed25519');
  const encryptedKey = path.join(dir, 'client_encrypted');
  const strangerKey = path.join(dir, 'stranger_ed25519');
  const passphrase = 'correct horse battery';
  await Promise.all([keygen(hostKey), keygen(clientKey), keygen(encryptedKey, passphrase), keygen(strangerKey)]);
  const authorized = path.join(dir, 'authorized_keys');
  await writeFile(authorized, `${await readFile(`${clientKey}.pub`, 'utf8')}${await readFile(`${encryptedKey}.pub`, 'utf8')}`, { mode: 0o644 });
  const root = path.join(dir, 'files');
  await mkdir(root);
  await chown(root, uid, gid);

  for (let attempt = 0; ; attempt += 1) {
    const port = await freePort();
    const config = path.join(dir, 'sshd_config');
    await writeFile(
      config,
      [
        `Port ${port}`,
        'ListenAddress 127.0.0.1',
        `HostKey ${hostKey}`,
        `PidFile ${path.join(dir, 'sshd.pid')}`,
        // The temp dir is not root-owned the way StrictModes wants; it is a test server.
        'StrictModes no',
        // Password checked against /etc/shadow directly; no PAM stack needed in a container.
        'UsePAM no',
        'PasswordAuthentication yes',
        'KbdInteractiveAuthentication no',
        'PubkeyAuthentication yes',
        `AuthorizedKeysFile ${authorized}`,
        `AllowUsers ${SFTP_TEST_USER}`,
        'PermitRootLogin no',
        'Subsystem sftp internal-sftp',
        'MaxStartups 100:30:200',
        'MaxSessions 100',
        'LogLevel INFO',
        '',
      ].join('\n'),
    );
    const child = spawn(SSHD, ['-D', '-e', '-f', config], { stdio: ['ignore', 'ignore', 'pipe'] });
    let log = '';
    child.stderr!.on('data', (d: Buffer) => (log += d.toString()));
    const ready = await waitListening(child, port, () => log);
    if (!ready.ok) {
      child.kill('SIGKILL');
      if (attempt < 3 && /Address already in use|Cannot bind/i.test(log)) continue;
      await rm(dir, { recursive: true, force: true });
      throw new Error(`sshd did not start: ${ready.reason}\n${log}`);
    }
    return {
      host: '127.0.0.1',
      port,
      username: SFTP_TEST_USER,
      password: SFTP_TEST_PASSWORD,
      hostKeySha256: await fingerprintOf(`${hostKey}.pub`),
      privateKeyPath: clientKey,
      privateKey: await readFile(clientKey, 'utf8'),
      encryptedKeyPath: encryptedKey,
      passphrase,
      strangerKeyPath: strangerKey,
      root,
      async stop() {
        if (child.exitCode === null) {
          const exited = new Promise((resolve) => child.once('exit', resolve));
          child.kill('SIGTERM');
          await exited;
        }
        await rm(dir, { recursive: true, force: true });
      },
    };
  }
}

async function waitListening(child: ChildProcess, port: number, log: () => string): Promise<ServiceProbe> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) return { ok: false, reason: `sshd exited with code ${child.exitCode}` };
    if (log().includes('Server listening on')) return { ok: true };
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (open) return { ok: true };
    await new Promise((r) => setTimeout(r, 50));
  }
  return { ok: false, reason: 'not listening after 10 s' };
}
