import { InvalidArgumentError, Option, type Command } from 'commander';
import { FAULT_KINDS, type FaultKind } from '../../simulator/fault-kinds.js';
import type { SimulatorOptions } from '../../simulator/options.js';

/**
 * `freight-sync simulate`: runs the Freight API simulator in the foreground (for demos and for
 * pointing a daemon at), until SIGINT or SIGTERM.
 */

function intArg(name: string, min: number, max = Number.MAX_SAFE_INTEGER) {
  return (value: string): number => {
    if (!/^-?\d+$/.test(value)) throw new InvalidArgumentError(`${name} must be an integer`);
    const n = Number(value);
    if (n < min || n > max) throw new InvalidArgumentError(`${name} must be between ${min} and ${max}`);
    return n;
  };
}

function numArg(name: string, min: number, max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (value.trim() === '' || !Number.isFinite(n) || n < min || n > max) throw new InvalidArgumentError(`${name} must be a number between ${min} and ${max}`);
    return n;
  };
}

function kindsArg(value: string): FaultKind[] {
  const kinds = value.split(',').map((k) => k.trim()).filter(Boolean);
  for (const k of kinds) {
    if (!(FAULT_KINDS as readonly string[]).includes(k)) throw new InvalidArgumentError(`unknown fault kind "${k}" (use ${FAULT_KINDS.join(', ')})`);
  }
  return kinds as FaultKind[];
}

interface SimulateFlags {
  variant: 'main' | 'brokerage';
  port: number;
  loads: number;
  seed: number;
  rateLimit?: number;
  burst?: number;
  faultRate: number;
  faultKinds?: FaultKind[];
  slowMs: number;
  ambiguousCreateRate: number;
  tokenTtl: number;
  clockOffset: number;
  mutateEvery?: number;
  mutatePerTick: number;
  webhookUrl?: string;
  webhookSecret?: string;
  clientId: string;
  clientSecret: string;
  pageDelay: number;
  retryAfter: 'seconds' | 'http-date';
  strictEncoding?: boolean;
}

export function register(program: Command): void {
  program
    .command('simulate')
    .description('Run the Freight Operations API simulator on 127.0.0.1 until Ctrl-C (SIGINT) or SIGTERM.')
    .addOption(new Option('--variant <variant>', 'API variant to simulate').choices(['main', 'brokerage']).default('main'))
    .option('--port <n>', 'port to listen on; 0 picks a free port', intArg('--port', 0, 65_535), 0)
    .option('--loads <n>', 'number of generated loads (up to 1000000+; generated lazily)', intArg('--loads', 0), 5_000)
    .option('--seed <n>', 'seed of the generated data, faults and mutator', intArg('--seed', -2_147_483_648, 2_147_483_647), 1)
    .option('--rate-limit <rps>', 'requests per second before 429 + Retry-After (default: no limit)', numArg('--rate-limit', 0.001, 1_000_000))
    .option('--burst <n>', 'token-bucket burst for --rate-limit (default: 2 x rps, at least 1)', intArg('--burst', 1))
    .addOption(new Option('--retry-after <format>', 'Retry-After format on 429').choices(['seconds', 'http-date']).default('seconds'))
    .option('--fault-rate <f>', 'probability (0..1) that a request fails with an injected fault', numArg('--fault-rate', 0, 1), 0)
    .option('--fault-kinds <list>', `comma-separated fault kinds (default all: ${FAULT_KINDS.join(',')})`, kindsArg)
    .option('--slow-ms <ms>', 'delay of the "slow" fault', intArg('--slow-ms', 0), 2_000)
    .option('--ambiguous-create-rate <f>', 'probability that POST /loads creates the load but answers 502 or drops the connection', numArg('--ambiguous-create-rate', 0, 1), 0)
    .option('--token-ttl <seconds>', 'access token lifetime in seconds', intArg('--token-ttl', 1), 3_600)
    .option('--clock-offset <seconds>', 'server clock minus real clock, in seconds (may be negative)', intArg('--clock-offset', -31_536_000, 31_536_000), 0)
    .option('--mutate-every <ms>', 'run the mutator every N ms (changes records while clients page); off by default', intArg('--mutate-every', 1))
    .option('--mutate-per-tick <n>', 'mutator steps per tick', intArg('--mutate-per-tick', 1), 5)
    .option('--webhook-url <url>', 'deliver signed webhook events to this URL (needs --webhook-secret)')
    .option('--webhook-secret <secret>', 'secret for the X-Hub-Signature (sha1 HMAC) of webhook deliveries')
    .option('--client-id <id>', 'client id accepted by POST /retrieve-token', 'sim-client')
    .option('--client-secret <secret>', 'client secret accepted by POST /retrieve-token', 'sim-secret')
    .option('--page-delay <ms>', 'artificial latency added to every API answer', intArg('--page-delay', 0), 0)
    .option('--strict-encoding', 'brokerage: accept only multipart/form-data request bodies (spec §5.2); JSON bodies get a 415')
    .addHelpText(
      'after',
      [
        '',
        'Prints the base URL, the client id and secret, and the admin URL (/__admin: GET /truth?resource=loads,',
        'GET /stats, POST /config, POST /mutate?count=N, POST /reset-stats, POST /advance?ms=N to move the server',
        'clock forward), then serves until stopped.',
        '',
        'Example:',
        '  freight-sync simulate --variant brokerage --loads 100000 --rate-limit 20 --fault-rate 0.05 --mutate-every 500',
      ].join('\n'),
    )
    .action(async (flags: SimulateFlags) => {
      if (Boolean(flags.webhookUrl) !== Boolean(flags.webhookSecret)) {
        throw new InvalidArgumentError('--webhook-url and --webhook-secret go together');
      }
      const options: Partial<SimulatorOptions> = {
        variant: flags.variant,
        port: flags.port,
        loads: flags.loads,
        seed: flags.seed,
        clientId: flags.clientId,
        clientSecret: flags.clientSecret,
        accessTokenTtlMs: flags.tokenTtl * 1000,
        clockOffsetMs: flags.clockOffset * 1000,
        rateLimit: flags.rateLimit ? { requestsPerSecond: flags.rateLimit, burst: flags.burst ?? Math.max(1, Math.ceil(flags.rateLimit * 2)) } : null,
        retryAfterFormat: flags.retryAfter,
        faults: { rate: flags.faultRate, kinds: flags.faultKinds ?? [...FAULT_KINDS], slowMs: flags.slowMs },
        ambiguousCreateRate: flags.ambiguousCreateRate,
        mutator: { enabled: flags.mutateEvery !== undefined, intervalMs: flags.mutateEvery ?? 1_000, perTick: flags.mutatePerTick },
        webhooks: flags.webhookUrl && flags.webhookSecret ? { url: flags.webhookUrl, secret: flags.webhookSecret } : null,
        pageDelayMs: flags.pageDelay,
        strictEncoding: flags.strictEncoding === true,
      };
      const { simulateAction } = await import('../actions/simulate.js');
      await simulateAction(options);
    });
}
