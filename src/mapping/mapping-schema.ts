import { IANAZone } from 'luxon';
import { z } from 'zod';

/**
 * The mapping file format (YAML or inline config). Every object is `.strict()` so a misspelled key
 * is an error instead of a setting that silently does nothing. Semantic checks that need the whole
 * tree (paths parse, key columns exist, names are unique) live in `compile-mapping.ts`.
 */
/** `varchar(40)`, `numeric(12, 2)`, `double precision`, `nvarchar(max)`: words, then at most one size list. */
export const SQL_TYPE_PATTERN = /^[A-Za-z][A-Za-z0-9]*( [A-Za-z][A-Za-z0-9]*){0,3}( ?\((\d{1,5}|max|MAX)( ?, ?\d{1,3})?\))?$/;

const cellValue = z.union([z.string(), z.number(), z.boolean(), z.null()]);

const dateTransform = z
  .object({
    type: z.literal('date'),
    /** `iso` (ISO 8601 with offset), `isoDate` (yyyy-MM-dd), `epochMillis`, or a luxon token string such as `yyyy-MM-dd HH:mm`. */
    format: z.string().min(1).default('iso'),
    timeZone: z
      .string()
      .default('UTC')
      // 'UTC' first: asking ICU about any zone maps its time-zone data in (~5 MiB of resident
      // memory for the whole run, issue 14), and every mapping has a date column in UTC.
      .refine((zone) => zone === 'UTC' || IANAZone.isValidZone(zone), { message: 'unknown IANA time zone' }),
  })
  .strict();

const numberTransform = z
  .object({
    type: z.literal('number'),
    decimals: z.number().int().min(0).max(12).optional(),
    /** With `decimals`: output a string with exactly that many digits (`12.50`) instead of a number. */
    fixed: z.boolean().default(false),
  })
  .strict();

/**
 * Exact decimal (money, rates): kept as decimal text, never through a float. `scale` fixes the
 * fraction digits (`"0.1"` → `"0.10"`) and with `precision` sizes SQL columns as DECIMAL(p,s).
 */
const decimalTransform = z
  .object({
    type: z.literal('decimal'),
    scale: z.number().int().min(0).max(30).optional(),
    precision: z.number().int().min(1).max(38).optional(),
    /** More fraction digits than `scale`: rounded half away from zero, half to even, or an error. */
    round: z.enum(['half-up', 'half-even', 'error']).default('half-up'),
  })
  .strict()
  .refine((t) => t.precision === undefined || t.scale === undefined || t.scale <= t.precision, {
    message: 'scale must not be larger than precision',
    path: ['scale'],
  });

/** Whole numbers (counts): a fraction is an error, never truncated. */
const integerTransform = z.object({ type: z.literal('integer') }).strict();

const booleanTransform = z
  .object({ type: z.literal('boolean'), true: cellValue.default(true), false: cellValue.default(false) })
  .strict();

const joinTransform = z
  .object({ type: z.literal('join'), separator: z.string().default(','), path: z.string().min(1).optional() })
  .strict();

const constantTransform = z.object({ type: z.literal('constant'), value: cellValue }).strict();
const defaultTransform = z.object({ type: z.literal('default'), value: cellValue }).strict();
const stringTransform = z.object({ type: z.literal('string'), trim: z.boolean().default(false) }).strict();
const jsonTransform = z.object({ type: z.literal('json') }).strict();
/** Exact sum of an array (of `path` inside each element) as a decimal string: money never goes through a float. */
const sumTransform = z.object({ type: z.literal('sum'), path: z.string().min(1).optional() }).strict();
/** The one value every element of an array agrees on (of `path` inside each element); null when they differ. */
const sameTransform = z.object({ type: z.literal('same'), path: z.string().min(1).optional() }).strict();
/**
 * An embedded object's id (`field`, default `_id`) or the bare id itself: the API sends references
 * both ways. A list (of ids or objects) gives its ids joined by `separator`.
 */
const refTransform = z
  .object({ type: z.literal('ref'), field: z.string().min(1).default('_id'), separator: z.string().default(';') })
  .strict();

export const TRANSFORM_TYPES = ['date', 'number', 'decimal', 'integer', 'boolean', 'join', 'constant', 'default', 'string', 'json', 'sum', 'same', 'ref'] as const;

const transformObject = z.discriminatedUnion(
  'type',
  [
    dateTransform,
    numberTransform,
    decimalTransform,
    integerTransform,
    booleanTransform,
    joinTransform,
    constantTransform,
    defaultTransform,
    stringTransform,
    jsonTransform,
    sumTransform,
    sameTransform,
    refTransform,
  ],
  { error: () => `must be one of ${TRANSFORM_TYPES.join(', ')}` },
);

/** `number` is shorthand for `{ type: number }`. */
export const transformSchema = z.preprocess((value) => (typeof value === 'string' ? { type: value } : value), transformObject);
export type Transform = z.output<typeof transformSchema>;

const transformListSchema = z.array(transformSchema);

/**
 * `transform` takes one transform or a list that chains left to right. Parsed by hand so an error in
 * the single form reads `transform.type` (not `transform[0].type` or an opaque union failure).
 */
const transformField = z.unknown().transform((value, ctx): Transform[] => {
  const list = Array.isArray(value);
  const result = list ? transformListSchema.safeParse(value) : transformSchema.safeParse(value);
  if (!result.success) {
    // Re-raised as they are (not as "custom") so the config formatter words them like any other issue.
    for (const issue of result.error.issues) ctx.addIssue({ ...issue, path: [...issue.path] } as Parameters<typeof ctx.addIssue>[0]);
    return z.NEVER;
  }
  return list ? (result.data as Transform[]) : [result.data as Transform];
});

/** One alternative source of a column: a path and the transforms that turn it into the column's input. */
export const fallbackSchema = z.object({ path: z.string().min(1), transform: transformField.optional() }).strict();
export type FallbackConfig = z.output<typeof fallbackSchema>;

export const columnSchema = z
  .object({
    name: z.string().min(1),
    path: z.string().min(1).optional(),
    /**
     * Sources tried in order when `path` yields nothing (absent, null or empty text), for fields
     * that real payloads carry in more than one place (an invoice's status only in its entries).
     * The first that yields a value goes through the column's `transform`.
     */
    fallback: z.array(fallbackSchema).min(1).optional(),
    transform: transformField.optional(),
    /** Value when the path (after transforms) yields null or nothing. */
    default: cellValue.optional(),
    /**
     * Column type for SQL sinks (`varchar(40)`, `numeric(12,2)`, `jsonb`), overriding the type they
     * derive from the transforms. Other sinks ignore it. A type name and an optional size only, so
     * it can never carry other SQL.
     */
    sqlType: z
      .string()
      .regex(SQL_TYPE_PATTERN, 'must be a type name with an optional size, such as varchar(40) or numeric(12,2)')
      .optional(),
  })
  .strict();
export type ColumnConfig = z.output<typeof columnSchema>;

export interface ChildConfig {
  table: string;
  path: string;
  parentKey: Record<string, string>;
  key: string[];
  columns: ColumnConfig[];
  children?: ChildConfig[] | undefined;
  includeRaw?: boolean | undefined;
}

export const childSchema: z.ZodType<ChildConfig> = z.lazy(() =>
  z
    .object({
      table: z.string().min(1),
      path: z.string().min(1),
      parentKey: z.record(z.string(), z.string().min(1)),
      key: z.array(z.string().min(1)).min(1),
      columns: z.array(columnSchema).min(1),
      children: z.array(childSchema).optional(),
      includeRaw: z.boolean().optional(),
    })
    .strict(),
) as unknown as z.ZodType<ChildConfig>;

const mappingFields = {
  table: z.string().min(1),
  key: z.array(z.string().min(1)).min(1),
  columns: z.array(columnSchema).min(1),
  children: z.array(childSchema).optional(),
  includeRaw: z.boolean().optional(),
  /** Paths removed from `_raw` (for example `portPassword`), so secrets never reach a sink. */
  rawOmit: z.array(z.string().min(1)).optional(),
};

/** One variant's overrides: each key given replaces the top-level key of the same name. */
export const variantOverrideSchema = z.object(mappingFields).partial().strict();

export const mappingSchema = z
  .object({ ...mappingFields, variants: z.record(z.string(), variantOverrideSchema).optional() })
  .strict();

export type MappingConfig = z.output<typeof mappingSchema>;
export type MappingInput = z.input<typeof mappingSchema>;
export type MappingBaseConfig = Omit<MappingConfig, 'variants'>;
