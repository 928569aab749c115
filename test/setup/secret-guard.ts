import { afterAll, afterEach } from 'vitest';
import { containsRegisteredSecret, scrubSecrets } from '../../src/util/secrets.js';

/**
 * Fails the suite when any test writes a registered secret (client secret, tokens, webhook secret,
 * passwords — everything `registerSecret` learned) to stdout or stderr, whether through a logger,
 * console or a stray print. The offending chunk is written masked, so CI logs never hold it either.
 * Console calls are covered too: vitest forwards them itself, bypassing process.stdout.
 */
const leaks: string[] = [];

function guard(stream: NodeJS.WriteStream, name: string): void {
  const original = stream.write.bind(stream) as (...args: unknown[]) => boolean;
  stream.write = ((chunk: unknown, ...rest: unknown[]) => {
    const text = typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) || chunk instanceof Uint8Array ? Buffer.from(chunk).toString('utf8') : String(chunk);
    if (containsRegisteredSecret(text)) {
      leaks.push(`${name}: ${scrubSecrets(text).slice(0, 200)}`);
      return original(scrubSecrets(text), ...rest);
    }
    return original(chunk, ...rest);
  }) as typeof stream.write;
}

guard(process.stdout, 'stdout');
guard(process.stderr, 'stderr');
for (const method of ['log', 'info', 'warn', 'error', 'debug', 'trace'] as const) {
  const original = console[method].bind(console);
  console[method] = (...args: unknown[]) => {
    const text = args.map((a) => (typeof a === 'string' ? a : safeJson(a))).join(' ');
    if (!containsRegisteredSecret(text)) return original(...args);
    leaks.push(`console.${method}: ${scrubSecrets(text).slice(0, 200)}`);
    original(scrubSecrets(text));
  };
}

function safeJson(value: unknown): string {
  try {
    return value instanceof Error ? `${value.message}\n${value.stack ?? ''}` : JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Leaks recorded so far, cleared; for the guard's own test. */
export function takeLeaks(): string[] {
  return leaks.splice(0);
}

function check(): void {
  if (leaks.length === 0) return;
  const found = leaks.splice(0);
  throw new Error(`a registered secret was written to stdout/stderr (${found.length}x); masked excerpts:\n${found.join('\n')}`);
}

afterEach(check);
afterAll(check);
