import type { Command } from 'commander';
import { API_VARIANTS, type ApiVariant } from '../../api/variant.js';
import { UsageError } from '../../util/errors.js';

/** The most records `--sample` asks for per stream: one page of every endpoint. */
const MAX_SAMPLE = 50;

interface DiscoverOptions {
  variant?: string;
  stream?: string[];
  json?: boolean;
  columns?: boolean;
  sample?: string;
  raw?: boolean;
}

/** `freight-sync discover`: what each variant offers, and (`--sample N`) what its records look like mapped. */
export function register(program: Command): void {
  program
    .command('discover')
    .description('List the streams of each API variant with their key, cursor and the tables and columns of their default mapping; --sample N fetches N records per stream and shows them mapped.')
    .option('--variant <variant>', `only this variant (${API_VARIANTS.join(' | ')}); default: both, or the config's with -c or --sample`)
    .option('-s, --stream <name...>', 'only these streams (and show their columns)')
    .option('--columns', 'show every listed stream column by column')
    .option('--json', 'print streams (or samples) as JSON, columns included')
    .option('--sample <n>', `fetch up to n records (1-${MAX_SAMPLE}) of each stream with the config's credentials and show them mapped (needs a config)`)
    .option('--raw', 'with --sample: print each record as the API sent it, too')
    .addHelpText(
      'after',
      '\nWithout --sample nothing is called and no config is needed: the list comes from the stream definitions and\nconfig/mappings. Types are what the SQL sink derives its column types from (docs/connectors.md, Tables and types).\n--sample reads the config (-c), obtains a token and makes one call per stream (the endpoint the stream reads,\nwith a limit; invoices billed in the last 30 days, audits of the last day); records are mapped with the mapping\neach sink of the config uses for the stream (the default mapping when the config sends it nowhere). Without\n--stream it samples the streams the config enables. Nothing is written to any sink or checkpoint.\nExit 1 when a sample call failed, 2 for bad usage or a bad config.',
    )
    .action(async (options: DiscoverOptions, command: Command) => {
      const variant = parseVariant(options.variant);
      if (options.sample === undefined && options.raw) throw new UsageError('--raw: only with --sample');
      const count = options.sample === undefined ? undefined : parseSampleCount(options.sample);
      const { discoverAction } = await import('../actions/discover.js');
      await discoverAction({ variant, count, stream: options.stream, json: options.json, columns: options.columns, raw: options.raw }, command);
    });
}

function parseSampleCount(value: string): number {
  const count = Number(value);
  if (!Number.isInteger(count) || count < 1 || count > MAX_SAMPLE) throw new UsageError(`--sample: expected a whole number from 1 to ${MAX_SAMPLE}, got "${value}"`);
  return count;
}

function parseVariant(value: string | undefined): ApiVariant | undefined {
  if (value === undefined) return undefined;
  if (!(API_VARIANTS as readonly string[]).includes(value)) throw new UsageError(`--variant: expected ${API_VARIANTS.join(' or ')}, got "${value}"`);
  return value as ApiVariant;
}
