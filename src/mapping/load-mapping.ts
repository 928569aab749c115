import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parseDocument } from 'yaml';
import { z } from 'zod';
import { ConfigError } from '../util/errors.js';
import { applyVariant, compileMapping, isStreamMapping, MappingCompileError, type StreamMapping } from './compile-mapping.js';
import { defaultMappingFile, isStreamName } from './default-mappings.js';
import { formatPath, formatZodIssues } from '../config/format-issues.js';
import { mappingSchema } from './mapping-schema.js';

export interface LoadMappingOptions {
  /** Folder a relative `file:` resolves against (the config file's folder). */
  readonly baseDir: string;
  /** API variant (`main`, `brokerage`); selects `variants.<variant>` overrides when present. */
  readonly variant?: string | undefined;
  /** Prefix of error paths, e.g. `['connectors', 'erp', 'mappings', 'loads']` (a dotted string works too). */
  readonly pathPrefix?: string | readonly string[];
}

const fileReference = z.object({ file: z.string().min(1) }).strict();

/**
 * Resolves the mapping of one stream: `{ file: 'path.yaml' }`, an inline mapping object, or
 * nothing (the built-in default in `config/mappings/<stream>.yaml`). Throws `ConfigError` listing
 * every problem with its full path.
 */
export async function loadMapping(stream: string, configValue: unknown, options: LoadMappingOptions): Promise<StreamMapping> {
  const prefix = toPrefix(options.pathPrefix, stream);
  if (isStreamMapping(configValue)) return configValue;

  if (configValue === undefined || configValue === null) {
    if (!isStreamName(stream)) throw new ConfigError([`${formatPath(prefix)}: stream "${stream}" has no default mapping; give one inline or with file:`]);
    const file = defaultMappingFile(stream);
    return compileFrom(stream, await readYaml(file, prefix), options.variant, prefix, file);
  }

  if (typeof configValue === 'object' && configValue !== null && 'file' in configValue) {
    const ref = fileReference.safeParse(configValue);
    if (!ref.success) throw new ConfigError(formatZodIssues(ref.error, prefix, { schema: fileReference, input: configValue }));
    const file = path.resolve(options.baseDir, ref.data.file);
    return compileFrom(stream, await readYaml(file, [...prefix, 'file']), options.variant, prefix, file);
  }
  return compileFrom(stream, configValue, options.variant, prefix, undefined);
}

/** Validates and compiles an already-parsed mapping value (no file access). */
export function parseMapping(
  stream: string,
  value: unknown,
  options: { variant?: string | undefined; pathPrefix?: string | readonly string[] } = {},
): StreamMapping {
  return compileFrom(stream, value, options.variant, toPrefix(options.pathPrefix, stream), undefined);
}

function toPrefix(prefix: string | readonly string[] | undefined, stream: string): readonly string[] {
  if (prefix === undefined) return ['mappings', stream];
  return typeof prefix === 'string' ? [prefix] : prefix;
}

function compileFrom(stream: string, value: unknown, variant: string | undefined, prefix: readonly string[], source: string | undefined): StreamMapping {
  const parsed = mappingSchema.safeParse(value, { reportInput: true });
  if (!parsed.success) throw new ConfigError(formatZodIssues(parsed.error, prefix, { schema: mappingSchema, input: value }), source);
  try {
    return compileMapping(stream, applyVariant(parsed.data, variant), variant);
  } catch (error) {
    if (!(error instanceof MappingCompileError)) throw error;
    const where = variant && parsed.data.variants?.[variant] ? ` (with variant ${variant})` : '';
    throw new ConfigError(
      error.issues.map((issue) => `${formatPath([...prefix, ...issue.path])}: ${issue.message}${where}`),
      source,
    );
  }
}

async function readYaml(file: string, prefixPath: readonly string[]): Promise<unknown> {
  const prefix = formatPath(prefixPath);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ConfigError([`${prefix}: cannot read mapping file ${file} (${code ?? String(error)})`]);
  }
  const doc = parseDocument(text, { prettyErrors: true, merge: true });
  if (doc.errors.length > 0) {
    throw new ConfigError(doc.errors.map((e) => `${prefix}: ${e.message}`), file);
  }
  return doc.toJS() as unknown;
}
