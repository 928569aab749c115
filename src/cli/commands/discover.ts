import type { Command } from 'commander';
import { sampleStreams } from '../../app/discover-sample.js';
import { discoverStreams } from '../../app/discover.js';
import { API_VARIANTS, type ApiVariant } from '../../api/variant.js';
import { UsageError } from '../../util/errors.js';
import { globalOptions } from '../command-context.js';
import { renderSamples, renderStreamColumns, renderStreamList } from '../discover-report.js';
import { EXIT_OK, EXIT_WORK_FAILED } from '../exit-codes.js';
import { prepareCommand } from '../runtime.js';

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
      if (options.sample === undefined) {
        if (options.raw) throw new UsageError('--raw: only with --sample');
        // An explicit -c picks the config's variant; otherwise no config is read at all.
        const configured = !variant && globalOptions(command).config ? (await prepareCommand(command)).loaded.config.api.variant : undefined;
        const only = variant ?? configured;
        const streams = await discoverStreams({ variants: only ? [only] : undefined, streams: options.stream });
        if (options.json) process.stdout.write(`${JSON.stringify(streams, null, 2)}\n`);
        else if (options.stream || options.columns) process.stdout.write(renderStreamColumns(streams));
        else process.stdout.write(`${renderStreamList(streams)}\nShow the columns with --stream NAME (or --columns); records mapped with --sample N -c CONFIG.\n`);
        process.exitCode = EXIT_OK;
        return;
      }
      const count = Number(options.sample);
      if (!Number.isInteger(count) || count < 1 || count > MAX_SAMPLE) throw new UsageError(`--sample: expected a whole number from 1 to ${MAX_SAMPLE}, got "${options.sample}"`);
      const runtime = await prepareCommand(command);
      const configured = runtime.loaded.config.api.variant;
      if (variant && variant !== configured) throw new UsageError(`--variant ${variant}: --sample uses the config's API (variant ${configured})`);
      const samples = await sampleStreams(runtime.deployment, { streams: options.stream, count, logger: runtime.logger, signal: new AbortController().signal });
      process.stdout.write(options.json ? `${JSON.stringify(samples, null, 2)}\n` : renderSamples(samples, { raw: options.raw === true }));
      process.exitCode = samples.some((s) => s.error) ? EXIT_WORK_FAILED : EXIT_OK;
    });
}

function parseVariant(value: string | undefined): ApiVariant | undefined {
  if (value === undefined) return undefined;
  if (!(API_VARIANTS as readonly string[]).includes(value)) throw new UsageError(`--variant: expected ${API_VARIANTS.join(' or ')}, got "${value}"`);
  return value as ApiVariant;
}
