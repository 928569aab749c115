import { z } from 'zod';
import { FAULT_KINDS, type FaultKind } from './fault-kinds.js';

export { FAULT_KINDS, type FaultKind };

const rateLimitSchema = z
  .object({ requestsPerSecond: z.number().positive(), burst: z.number().int().positive() })
  .nullable();

const faultsSchema = z.object({
  rate: z.number().min(0).max(1).default(0),
  kinds: z.array(z.enum(FAULT_KINDS)).default([...FAULT_KINDS]),
  slowMs: z.number().int().min(0).default(2_000),
});

const mutatorSchema = z.object({
  intervalMs: z.number().int().positive().default(1_000),
  perTick: z.number().int().min(0).default(5),
  enabled: z.boolean().default(false),
  /**
   * Writes that become visible late (a long transaction, a lagging read replica): this share of
   * the mutator's load edits (its field updates; status moves and payments stay on time) carry an
   * updatedAt up to `maxLateMs` before the server's now (never before the load's previous updatedAt). Off when absent; drawn from its own random stream.
   */
  lateWrites: z
    .object({ share: z.number().min(0).max(1), maxLateMs: z.number().int().min(1) })
    .optional(),
});

const webhooksSchema = z
  .object({ url: z.string().url(), secret: z.string(), types: z.array(z.string()).optional() })
  .nullable();

export const simulatorOptionsSchema = z.object({
  variant: z.enum(['main', 'brokerage']).default('main'),
  seed: z.number().int().default(1),
  port: z.number().int().min(0).max(65_535).default(0),
  loads: z.number().int().min(0).max(50_000_000).default(5_000),
  customers: z.number().int().min(1).default(200),
  consignees: z.number().int().min(1).default(200),
  bills: z.number().int().min(0).default(1_000),
  supportMoves: z.number().int().min(0).default(500),
  dataStart: z
    .string()
    .refine((s) => !Number.isNaN(Date.parse(s)), 'dataStart must be an ISO date')
    .default(() => new Date(Date.now() - 180 * 86_400_000).toISOString()),
  clientId: z.string().min(1).default('sim-client'),
  clientSecret: z.string().min(1).default('sim-secret'),
  accessTokenTtlMs: z.number().int().positive().default(3_600_000),
  rateLimit: rateLimitSchema.default(null),
  retryAfterFormat: z.enum(['seconds', 'http-date']).default('seconds'),
  faults: faultsSchema.default({ rate: 0, kinds: [...FAULT_KINDS], slowMs: 2_000 }),
  /** Share of load/customer/invoice creates and load deletes applied but answered with a 502 or a dropped socket. */
  ambiguousCreateRate: z.number().min(0).max(1).default(0),
  clockOffsetMs: z.number().int().default(0),
  mutator: mutatorSchema.default({ intervalMs: 1_000, perTick: 5, enabled: false }),
  invoiceListOmitsMultiChargeSet: z.boolean().default(true),
  /**
   * The mutator also changes invoices after billing (design §2.4): rebills of paid invoices,
   * sub-customer invoices, combined invoices across loads of one customer, voided invoices.
   * Off by default so existing scenarios keep their exact behaviour.
   */
  invoiceLifecycle: z.boolean().default(false),
  unboundedInvoiceQueryDays: z.number().int().positive().default(90),
  webhooks: webhooksSchema.default(null),
  pageDelayMs: z.number().int().min(0).default(0),
  /** Responses and webhook bodies in the shapes real API output has (real-shapes.ts); the store keeps the spec's. */
  realShapes: z.boolean().default(false),
  /**
   * Accept only the request encoding the spec states: on brokerage every request body must be
   * multipart/form-data (§5.2), anything else is a 415. Main states JSON as "recommended" only,
   * so it keeps accepting both. Off by default: the lenient server takes either.
   */
  strictEncoding: z.boolean().default(false),
});

export type SimulatorOptions = z.infer<typeof simulatorOptionsSchema>;
export type Variant = SimulatorOptions['variant'];

export const configurePatchSchema = z
  .object({
    rateLimit: rateLimitSchema,
    faults: faultsSchema,
    ambiguousCreateRate: z.number().min(0).max(1),
    clockOffsetMs: z.number().int(),
    mutator: mutatorSchema,
    webhooks: webhooksSchema,
    accessTokenTtlMs: z.number().int().positive(),
    pageDelayMs: z.number().int().min(0),
    invoiceLifecycle: z.boolean(),
    strictEncoding: z.boolean(),
  })
  .partial();

export type ConfigurePatch = Partial<
  Pick<
    SimulatorOptions,
    'rateLimit' | 'faults' | 'ambiguousCreateRate' | 'clockOffsetMs' | 'mutator' | 'webhooks' | 'accessTokenTtlMs' | 'pageDelayMs' | 'invoiceLifecycle' | 'strictEncoding'
  >
>;

export function parseSimulatorOptions(input: unknown): SimulatorOptions {
  return simulatorOptionsSchema.parse(input ?? {});
}
