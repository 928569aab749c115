import type { Command } from 'commander';
import { sampleStreams } from '../../app/discover-sample.js';
import { discoverStreams } from '../../app/discover.js';
import type { ApiVariant } from '../../api/variant.js';
import { UsageError } from '../../util/errors.js';
import { globalOptions } from '../command-context.js';
import { renderSamples, renderStreamColumns, renderStreamList } from '../discover-report.js';
import { EXIT_OK, EXIT_WORK_FAILED } from '../exit-codes.js';
import { prepareCommand } from '../runtime.js';

export interface DiscoverRun {
  variant?: ApiVariant;
  /** `--sample N`, already checked; undefined lists the streams without calling anything. */
  count?: number;
  stream?: string[];
  json?: boolean;
  columns?: boolean;
  raw?: boolean;
}

/** The work of `freight-sync discover` (options, help and flag checks in commands/discover.ts, loaded only when it runs). */
export async function discoverAction(options: DiscoverRun, command: Command): Promise<void> {
  const { variant, count } = options;
  if (count === undefined) {
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
  const runtime = await prepareCommand(command);
  const configured = runtime.loaded.config.api.variant;
  if (variant && variant !== configured) throw new UsageError(`--variant ${variant}: --sample uses the config's API (variant ${configured})`);
  const samples = await sampleStreams(runtime.deployment, { streams: options.stream, count, logger: runtime.logger, signal: new AbortController().signal });
  process.stdout.write(options.json ? `${JSON.stringify(samples, null, 2)}\n` : renderSamples(samples, { raw: options.raw === true }));
  process.exitCode = samples.some((s) => s.error) ? EXIT_WORK_FAILED : EXIT_OK;
}
