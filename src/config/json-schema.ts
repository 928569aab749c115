import { z } from 'zod';
import { TRUE_WORDS, FALSE_WORDS } from '../util/boolean.js';
import { VALUE_KIND_META, type ValueKind } from '../util/zod-values.js';
import { configSchema } from './schema.js';
import { STREAM_NAMES } from './stream-names.js';

/** JSON Schema node (draft 2020-12), as plain data. */
export type JsonSchema = Record<string, unknown>;

export interface ConfigJsonSchemaInput {
  /** Meaning of each key path, e.g. from docs/configuration.md (`connectors.<name>.type`, `sync.streams.<stream>.sinks`). */
  descriptions: ReadonlyMap<string, string>;
  /** The options schema of each connector type the installation knows (built-ins). */
  connectorOptions: ReadonlyMap<string, z.ZodType>;
}

/** `${VAR}` / `${VAR:-default}` anywhere in a value: interpolated from the environment before validation. */
const INTERPOLATED = '\\$\\{[A-Za-z_][A-Za-z0-9_]*(:-[^}]*)?\\}';
const DURATION = '^(P(?!$)(\\d+(\\.\\d+)?W)?(\\d+(\\.\\d+)?D)?(T(?=\\d)(\\d+(\\.\\d+)?H)?(\\d+(\\.\\d+)?M)?(\\d+(\\.\\d+)?S)?)?|.*' + INTERPOLATED + '.*)$';
/** The yes/no words of src/util/boolean.ts, any case, surrounding spaces ignored (JSON Schema regexes have no `i` flag). */
const BOOLEAN_WORD = `^\\s*(${[...TRUE_WORDS, ...FALSE_WORDS].map(anyCase).join('|')})\\s*$`;
function anyCase(word: string): string {
  return [...word].map((c) => (/[a-z]/.test(c) ? `[${c}${c.toUpperCase()}]` : c)).join('');
}
const interpolatedText: JsonSchema = { type: 'string', pattern: `^.*${INTERPOLATED}.*$` };

/** What a text-tolerant value (src/util/zod-values.ts) may hold in the file. */
function valueNode(kind: ValueKind, node: JsonSchema): JsonSchema {
  switch (kind) {
    case 'duration':
      return { type: 'string', pattern: DURATION, description: '(ISO 8601 duration such as PT30S, PT15M, P7D)' };
    case 'boolean':
      return { anyOf: [{ type: 'boolean' }, { type: 'string', pattern: BOOLEAN_WORD }, { type: 'integer', enum: [0, 1] }, interpolatedText] };
    case 'number':
      return { anyOf: [{ type: 'number' }, { type: 'string', pattern: '^\\s*-?\\d+(\\.\\d+)?\\s*$' }, interpolatedText] };
    case 'integer': {
      const bounds = Object.fromEntries(Object.entries(node).filter(([k]) => k === 'minimum' || k === 'maximum'));
      return { anyOf: [{ type: 'integer', ...bounds }, { type: 'string', pattern: '^\\s*-?\\d+\\s*$' }, interpolatedText] };
    }
  }
}

function toJson(schema: z.ZodType): JsonSchema {
  return z.toJSONSchema(schema, {
    io: 'input',
    // Transforms and refinements only narrow what the input may be; their input side is exact.
    unrepresentable: 'any',
    override: (ctx) => {
      const kind = ctx.jsonSchema[VALUE_KIND_META] as ValueKind | undefined;
      const choices = ctx.jsonSchema['enum'];
      const constrainedText = Array.isArray(choices) ? choices.every((c) => typeof c === 'string') : ctx.jsonSchema['type'] === 'string' && 'pattern' in ctx.jsonSchema;
      if (!kind && constrainedText) {
        // `level: ${LOG_LEVEL:-info}` is a valid file: the value is checked after interpolation.
        const { default: fallback, description, ...choice } = ctx.jsonSchema as JsonSchema;
        for (const key of Object.keys(ctx.jsonSchema)) delete ctx.jsonSchema[key];
        Object.assign(ctx.jsonSchema, { anyOf: [choice, interpolatedText] }, fallback === undefined ? {} : { default: fallback }, description === undefined ? {} : { description });
        return;
      }
      if (!kind) return;
      const replacement = valueNode(kind, ctx.jsonSchema);
      for (const key of Object.keys(ctx.jsonSchema)) delete ctx.jsonSchema[key];
      Object.assign(ctx.jsonSchema, replacement);
    },
  }) as JsonSchema;
}

/**
 * The JSON Schema of the configuration file, generated from the zod schema that validates it, for
 * editor completion and checks (`# yaml-language-server: $schema=…`). Each key carries its
 * meaning from the reference table; each connector `type` its own options schema. It describes
 * what the file may hold, so `${VAR}` text is allowed wherever a value is interpolated; the
 * deployment checks of `validate-config` (cross references, mappings) go further than any schema.
 */
export function configJsonSchema(input: ConfigJsonSchemaInput): JsonSchema {
  const root = toJson(configSchema);
  root['$id'] = 'https://freight-sync.dev/schema/config.json';
  root['title'] = 'freight-sync configuration';
  describeTree(root, [], input.descriptions);
  const connectorEntry = (root['properties'] as Record<string, JsonSchema> | undefined)?.['connectors']?.['additionalProperties'] as JsonSchema | undefined;
  if (connectorEntry) addConnectorOptions(connectorEntry, input.connectorOptions);
  return root;
}

/** Per built-in type, `options` validates against that connector's own schema. */
function addConnectorOptions(entry: JsonSchema, connectorOptions: ReadonlyMap<string, z.ZodType>): void {
  const branches = [...connectorOptions].map(([type, schema]) => {
    const options = toJson(schema);
    delete options['$schema'];
    return { if: { properties: { type: { const: type } }, required: ['type'] }, then: { properties: { options } } };
  });
  const properties = entry['properties'] as Record<string, JsonSchema> | undefined;
  const typeNode = properties?.['type'];
  if (typeNode) typeNode['examples'] = [...connectorOptions.keys()];
  if (branches.length > 0) entry['allOf'] = branches;
}

const STREAMS: ReadonlySet<string> = new Set(STREAM_NAMES);

/** Adds `description` to every node whose key path has a row in the reference table. */
function describeTree(node: JsonSchema, path: readonly string[], descriptions: ReadonlyMap<string, string>, describeSelf = true): void {
  const text = describeSelf ? descriptionOf(path, descriptions) : undefined;
  if (text) node['description'] = typeof node['description'] === 'string' ? `${text} ${node['description'] as string}` : text;
  const properties = node['properties'] as Record<string, JsonSchema> | undefined;
  for (const [key, child] of Object.entries(properties ?? {})) describeTree(child, [...path, key], descriptions);
  const additional = node['additionalProperties'];
  if (additional && typeof additional === 'object') describeTree(additional as JsonSchema, [...path, '<name>'], descriptions);
  for (const combinator of ['anyOf', 'oneOf', 'allOf'] as const) {
    const list = node[combinator];
    // Branches of a union share the key's description (on the union): only their members get theirs.
    if (Array.isArray(list)) for (const child of list as JsonSchema[]) describeTree(child, path, descriptions, false);
  }
}

function descriptionOf(path: readonly string[], descriptions: ReadonlyMap<string, string>): string | undefined {
  if (path.length === 0) return undefined;
  const exact = path.join('.');
  // `sync.streams.loads.sinks` is documented once as `sync.streams.<stream>.sinks`.
  const generic = path.map((segment, i) => (i === 2 && path[0] === 'sync' && path[1] === 'streams' && (STREAMS.has(segment) || segment === '<name>') ? '<stream>' : segment)).join('.');
  return descriptions.get(exact) ?? descriptions.get(generic);
}

/** Key path → meaning, from the reference table of docs/configuration.md (`| \`key\` | default | meaning |`). */
export function parseReferenceTable(markdown: string): Map<string, string> {
  const rows = new Map<string, string>();
  for (const match of markdown.matchAll(/^\| `([^`]+)` \| ([^|]*) \| (.*) \|\s*$/gm)) {
    const [, key, defaultValue, meaning] = match as unknown as [string, string, string, string];
    const plainDefault = defaultValue.trim();
    const suffix = plainDefault && plainDefault !== '—' ? ` (default: ${plainDefault.replace(/`/g, '')})` : '';
    rows.set(key, `${meaning.trim()}${suffix}`);
  }
  return rows;
}
