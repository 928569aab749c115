import { z } from 'zod';
import { validate as isValidCron } from 'node-cron';
import { BOOLEAN_WORDS, parseBoolean } from '../util/boolean.js';
import { booleanValue, integerValue, isoDuration, numberValue, requiredOr } from '../util/zod-values.js';
import { cronFieldProblem } from './cron-fields.js';
import { describeValue } from './format-issues.js';
import {
  API_VARIANTS,
  LATE_WRITE_COVERS,
  REQUEST_ENCODINGS,
  defaultRequestEncoding,
  LOG_LEVELS,
  STREAM_NAMES,
  type ApiAuthConfig,
  type ConnectorConfig,
  type FreightSyncConfig,
  type StreamConfig,
  type StreamName,
  type StreamSettings,
  type SyncConfig,
  type WebhooksConfig,
  type HttpConfig,
  type ConsoleConfig,
  type SupervisionConfig,
  type ClusterConfig,
  type ReconcileConfig,
  type NotificationsConfig,
  type NotificationChannelConfig,
  type NotificationRateLimit,
  RECONCILE_STREAM_NAMES,
} from './types.js';

export type { FreightSyncConfig } from './types.js';

// The text-tolerant value schemas connectors share live in src/util (connectors may not import config).
export { booleanValue, integerValue, isoDuration, numberValue } from '../util/zod-values.js';

export function nonEmptyString() {
  return z.string().trim().min(1);
}

/** ISO 8601 date-time with a zone (`2024-01-01T00:00:00Z`), normalised to UTC `…Z` form. */
export function isoDateTime() {
  return z.unknown().transform((value, ctx): string => {
    if (
      typeof value === 'string' &&
      /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/.test(value) &&
      !Number.isNaN(Date.parse(value))
    ) {
      return new Date(value).toISOString();
    }
    if (value instanceof Date && !Number.isNaN(value.getTime())) return value.toISOString();
    requiredOr(
      ctx,
      value,
      `expected an ISO 8601 date-time with a time zone such as 2024-01-01T00:00:00Z, got ${describeValue(value)}`,
    );
    return z.NEVER;
  });
}

export function cronExpression() {
  return z.unknown().transform((value, ctx): string => {
    const problem = typeof value === 'string' && isValidCron(value.trim()) ? cronFieldProblem(value) : undefined;
    if (typeof value === 'string' && isValidCron(value.trim()) && problem === undefined) return value.trim();
    const why = problem === undefined ? '' : ` (${problem})`;
    requiredOr(ctx, value, `expected a cron expression such as "*/5 * * * *", got ${describeValue(value)}${why}`);
    return z.NEVER;
  });
}

function httpUrl() {
  return z.unknown().transform((value, ctx): string => {
    if (typeof value === 'string') {
      try {
        const url = new URL(value);
        if (url.protocol === 'http:' || url.protocol === 'https:') return value.replace(/\/+$/, '');
      } catch {
        // reported below
      }
    }
    requiredOr(ctx, value, `expected an http(s) URL such as https://api.example.com/v1, got ${describeValue(value)}`);
    return z.NEVER;
  });
}

/* ---------------------------------------------------------------- api */

const authSchema = z
  .strictObject({
    clientId: nonEmptyString().optional(),
    clientSecret: nonEmptyString().optional(),
    accessToken: nonEmptyString().optional(),
    refreshToken: nonEmptyString().optional(),
  })
  .transform((auth, ctx): ApiAuthConfig => {
    const hasClient = auth.clientId !== undefined || auth.clientSecret !== undefined;
    const hasTokens = auth.accessToken !== undefined || auth.refreshToken !== undefined;
    if (hasClient && hasTokens) {
      ctx.addIssue({
        code: 'custom',
        message: 'give either clientId + clientSecret, or accessToken + refreshToken, not both',
      });
      return z.NEVER;
    }
    if (hasClient) {
      if (auth.clientId && auth.clientSecret) return { clientId: auth.clientId, clientSecret: auth.clientSecret };
      const missing = auth.clientId ? 'clientSecret' : 'clientId';
      ctx.addIssue({ code: 'custom', path: [missing], message: `is required when ${missing === 'clientId' ? 'clientSecret' : 'clientId'} is given` });
      return z.NEVER;
    }
    if (hasTokens) {
      if (auth.accessToken && auth.refreshToken) {
        return { accessToken: auth.accessToken, refreshToken: auth.refreshToken };
      }
      const missing = auth.accessToken ? 'refreshToken' : 'accessToken';
      ctx.addIssue({ code: 'custom', path: [missing], message: `is required when ${missing === 'accessToken' ? 'refreshToken' : 'accessToken'} is given` });
      return z.NEVER;
    }
    ctx.addIssue({
      code: 'custom',
      message: 'give either clientId + clientSecret, or a pre-issued accessToken + refreshToken',
    });
    return z.NEVER;
  });

const rateLimitSchema = z.strictObject({
  requestsPerSecond: numberValue().refine((n) => n > 0, 'expected a number greater than 0').prefault(8),
  maxInFlight: integerValue(1, 64).prefault(4),
  adaptive: booleanValue().prefault(true),
});

const retrySchema = z.strictObject({
  maxAttempts: integerValue(1, 100).prefault(8),
  maxElapsed: isoDuration().prefault('PT10M'),
  baseDelay: isoDuration().prefault('PT0.5S'),
  maxDelay: isoDuration().prefault('PT60S'),
});

const apiSchema = z
  .strictObject({
    variant: z.enum(API_VARIANTS),
    baseUrl: httpUrl(),
    auth: authSchema,
    // Default per variant, from spec §5.2 (see docs/configuration.md).
    requestEncoding: z.enum(REQUEST_ENCODINGS).optional(),
    refreshBeforeExpiry: isoDuration().prefault('PT60S'),
    timeout: isoDuration().prefault('PT30S'),
    userAgent: nonEmptyString().optional(),
    rateLimit: rateLimitSchema.prefault({}),
    retry: retrySchema.prefault({}),
  })
  .transform(({ requestEncoding, ...api }) => ({ ...api, requestEncoding: requestEncoding ?? defaultRequestEncoding(api.variant) }));

/* ---------------------------------------------------------------- state, log */

const POSTGRES_URL = /^postgres(ql)?:\/\//i;
const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

const stateSchema = z.strictObject({
  // Resolved against the config file's folder by load-config.ts. Ignored when `url` is set.
  path: nonEmptyString().prefault('./data/freight-sync.sqlite'),
  /**
   * PostgreSQL instead of the SQLite file: `postgres://user:password@host:5432/database`. What
   * several processes or replicas share (docs/scaling-out.md).
   */
  url: nonEmptyString()
    .refine((value) => POSTGRES_URL.test(value), { message: 'expected a postgres:// or postgresql:// URL (SQLite is state.path)' })
    .optional(),
  /** The PostgreSQL schema holding freight-sync's tables (created when missing). */
  schema: nonEmptyString()
    .refine((value) => SCHEMA_NAME.test(value), { message: 'expected a lower-case SQL identifier (letters, digits, _; at most 63)' })
    .prefault('freight_sync'),
  /** Connections in the PostgreSQL pool. */
  poolSize: integerValue(2, 100).prefault(10),
});

const logSchema = z.strictObject({
  level: z.enum(LOG_LEVELS).prefault('info'),
  pretty: z
    .unknown()
    .transform((value, ctx): 'auto' | boolean => {
      if (typeof value === 'string' && value.trim().toLowerCase() === 'auto') return 'auto';
      const flag = parseBoolean(value);
      if (flag !== undefined) return flag;
      requiredOr(ctx, value, `expected auto or ${BOOLEAN_WORDS}, got ${describeValue(value)}`);
      return z.NEVER;
    })
    .prefault('auto'),
});

/* ---------------------------------------------------------------- sync */

/** Page size limits differ per endpoint (§8); each stream definition checks its own. */
const pageSizeSchema = integerValue(1, 100);

const streamSettingsShape = {
  schedule: cronExpression(),
  lookback: isoDuration(),
  safetyLag: isoDuration(),
  pageSize: pageSizeSchema,
  initialFrom: isoDateTime(),
  maxWindow: isoDuration(),
  minWindow: isoDuration(),
  lateWriteCover: z.enum(LATE_WRITE_COVERS),
};

const defaultsSchema = z.strictObject({
  schedule: streamSettingsShape.schedule.prefault('*/5 * * * *'),
  lookback: streamSettingsShape.lookback.prefault('PT10M'),
  safetyLag: streamSettingsShape.safetyLag.prefault('PT30S'),
  pageSize: streamSettingsShape.pageSize.prefault(50),
  initialFrom: streamSettingsShape.initialFrom.prefault('2024-01-01T00:00:00Z'),
  maxWindow: streamSettingsShape.maxWindow.prefault('P7D'),
  minWindow: streamSettingsShape.minWindow.prefault('PT1M'),
  lateWriteCover: streamSettingsShape.lateWriteCover.prefault('auto'),
});

const streamOptionValue = z.union([z.string(), z.number(), z.boolean()]);

const streamSchema = z.strictObject({
  enabled: booleanValue().prefault(true),
  sinks: z.array(nonEmptyString()).prefault([]),
  schedule: streamSettingsShape.schedule.optional(),
  lookback: streamSettingsShape.lookback.optional(),
  safetyLag: streamSettingsShape.safetyLag.optional(),
  pageSize: streamSettingsShape.pageSize.optional(),
  initialFrom: streamSettingsShape.initialFrom.optional(),
  maxWindow: streamSettingsShape.maxWindow.optional(),
  minWindow: streamSettingsShape.minWindow.optional(),
  lateWriteCover: streamSettingsShape.lateWriteCover.optional(),
  options: z.record(z.string(), streamOptionValue).prefault({}),
});

type StreamInput = z.output<typeof streamSchema>;

const streamsShape = Object.fromEntries(STREAM_NAMES.map((name) => [name, streamSchema.optional()])) as Record<
  StreamName,
  z.ZodOptional<typeof streamSchema>
>;

const syncSchema = z
  .strictObject({
    defaults: defaultsSchema.prefault({}),
    streams: z.strictObject(streamsShape).prefault({}),
  })
  .transform((sync, ctx): SyncConfig => {
    const streams: SyncConfig['streams'] = {};
    for (const name of STREAM_NAMES) {
      const stream = sync.streams[name] as StreamInput | undefined;
      if (!stream) continue;
      const merged = mergeStream(sync.defaults, stream);
      if (merged.minWindow > merged.maxWindow) {
        ctx.addIssue({
          code: 'custom',
          path: ['streams', name, 'minWindow'],
          message: `must not be longer than maxWindow (${merged.minWindow} ms > ${merged.maxWindow} ms)`,
        });
      }
      streams[name] = merged;
    }
    if (sync.defaults.minWindow > sync.defaults.maxWindow) {
      ctx.addIssue({ code: 'custom', path: ['defaults', 'minWindow'], message: 'must not be longer than maxWindow' });
    }
    return { defaults: sync.defaults, streams };
  });

/** A stream's own settings win over `sync.defaults`, key by key. */
function mergeStream(defaults: StreamSettings, stream: StreamInput): StreamConfig {
  return {
    enabled: stream.enabled,
    sinks: stream.sinks,
    schedule: stream.schedule ?? defaults.schedule,
    lookback: stream.lookback ?? defaults.lookback,
    safetyLag: stream.safetyLag ?? defaults.safetyLag,
    pageSize: stream.pageSize ?? defaults.pageSize,
    initialFrom: stream.initialFrom ?? defaults.initialFrom,
    maxWindow: stream.maxWindow ?? defaults.maxWindow,
    minWindow: stream.minWindow ?? defaults.minWindow,
    lateWriteCover: stream.lateWriteCover ?? defaults.lateWriteCover,
    options: stream.options,
  };
}

/* ---------------------------------------------------------------- connectors */

export const CONNECTOR_NAME_PATTERN = /^[a-z][a-z0-9_]*$/;

const connectorSchema = z
  .strictObject({
    // Checked against the connector registry when connectors are created (src/plugins).
    type: nonEmptyString().optional(),
    module: nonEmptyString().optional(),
    options: z.record(z.string(), z.unknown()).prefault({}),
    mappings: z.record(z.string(), z.unknown()).prefault({}),
  })
  .transform((connector, ctx): ConnectorConfig => {
    if (connector.type === undefined && connector.module === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['type'],
        message: 'is required unless module is given (a built-in connector type such as csv, or module: ./path.js)',
      });
      return z.NEVER;
    }
    if (connector.type !== undefined && connector.module !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['module'], message: 'give either type (built-in) or module (plug-in), not both' });
      return z.NEVER;
    }
    const source = connector.type !== undefined ? { type: connector.type } : { module: connector.module as string };
    return { ...source, options: connector.options, mappings: connector.mappings };
  });

/* ---------------------------------------------------------------- outbound, webhooks */

const outboundSchema = z.strictObject({
  enabled: booleanValue().prefault(false),
  sources: z.array(nonEmptyString()).prefault([]),
  // How often `run` asks the sources for new units.
  pollInterval: isoDuration().prefault('PT30S'),
  // Commands in flight at once (across loads; one per load at a time).
  concurrency: integerValue(1, 64).prefault(8),
  maxAttempts: integerValue(1, 1000).prefault(10),
  backoff: z
    .strictObject({ base: isoDuration().prefault('PT2S'), max: isoDuration().prefault('PT10M') })
    .prefault({}),
  reconcileBy: z.enum(['secondaryReferenceNo', 'containerNo+caller']).prefault('secondaryReferenceNo'),
  // Wait this long after an ambiguous create before looking the load up (search may lag).
  reconcileDelay: isoDuration().prefault('PT2S'),
  setSecondaryReferenceNo: booleanValue().prefault(true),
});

const listenSchema = z.unknown().transform((value, ctx): string => {
  if (typeof value === 'string') {
    const match = /^(.*):(\d{1,5})$/.exec(value.trim());
    if (match && match[1] !== '' && Number(match[2]) <= 65535) return value.trim();
  }
  requiredOr(ctx, value, `expected host:port such as 127.0.0.1:8080, got ${describeValue(value)}`);
  return z.NEVER;
});

const webhooksSchema = z
  .strictObject({
    enabled: booleanValue().prefault(false),
    listen: listenSchema.prefault('127.0.0.1:8080'),
    path: z.string().startsWith('/').prefault('/webhooks/freight'),
    secret: nonEmptyString().optional(),
    maxBodyBytes: integerValue(1024, 64 * 1024 * 1024).prefault(1_048_576),
    dedupeWindow: isoDuration().prefault('PT1H'),
    catchUpInterval: isoDuration().prefault('PT15M'),
    catchUpOverlap: isoDuration().prefault('PT2M'),
    catchUpMaxAge: isoDuration().prefault('P7D'),
    maxAttempts: integerValue(1, 1000).prefault(10),
    batchSize: integerValue(1, 1000).prefault(100),
  })
  .transform((webhooks, ctx): WebhooksConfig => {
    // Unsigned webhooks would let anyone on the network inject events.
    if (webhooks.enabled && webhooks.secret === undefined) {
      ctx.addIssue({ code: 'custom', path: ['secret'], message: 'is required when webhooks are enabled' });
    }
    const out: WebhooksConfig = {
      enabled: webhooks.enabled,
      listen: webhooks.listen,
      path: webhooks.path,
      maxBodyBytes: webhooks.maxBodyBytes,
      dedupeWindow: webhooks.dedupeWindow,
      catchUpInterval: webhooks.catchUpInterval,
      catchUpOverlap: webhooks.catchUpOverlap,
      catchUpMaxAge: webhooks.catchUpMaxAge,
      maxAttempts: webhooks.maxAttempts,
      batchSize: webhooks.batchSize,
    };
    if (webhooks.secret !== undefined) out.secret = webhooks.secret;
    return out;
  });

/* ---------------------------------------------------------------- http (ops) */

const consoleAuthSchema = z.strictObject({
  bearerToken: nonEmptyString().optional(),
  basic: z.strictObject({ username: nonEmptyString(), password: nonEmptyString() }).optional(),
});

const consoleSchema = z
  .strictObject({
    enabled: booleanValue().prefault(false),
    auth: consoleAuthSchema.optional(),
    publicUrl: httpUrl().optional(),
  })
  .transform((console, ctx): ConsoleConfig => {
    const { auth } = console;
    // An open console would let anyone on the network retry or cancel outbound commands.
    if (console.enabled && (auth === undefined || (auth.bearerToken === undefined && auth.basic === undefined))) {
      ctx.addIssue({ code: 'custom', path: ['auth'], message: 'is required when the console is enabled: give auth.bearerToken or auth.basic (username, password)' });
    }
    if (auth?.bearerToken !== undefined && auth.basic !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['auth'], message: 'give either bearerToken or basic, not both' });
    }
    const out: ConsoleConfig = { enabled: console.enabled };
    if (auth?.bearerToken !== undefined) out.auth = { bearerToken: auth.bearerToken };
    else if (auth?.basic !== undefined) out.auth = { basic: { ...auth.basic } };
    if (console.publicUrl !== undefined) out.publicUrl = console.publicUrl;
    return out;
  });

const httpSchema = z
  .strictObject({
    enabled: booleanValue().prefault(true),
    listen: listenSchema.prefault('127.0.0.1:9090'),
    readyCacheTtl: isoDuration().prefault('PT30S'),
    checkTimeout: isoDuration().prefault('PT5S'),
    apiUnreachableAfter: isoDuration().prefault('PT1M'),
    console: consoleSchema.prefault({}),
  })
  .transform((http, ctx): HttpConfig => {
    // The console is served by the ops server: without it the console would silently be absent.
    if (http.console.enabled && !http.enabled) ctx.addIssue({ code: 'custom', path: ['console', 'enabled'], message: 'needs http.enabled (the console is served on the ops port)' });
    return { ...http };
  });

/* ---------------------------------------------------------------- supervision (run) */

const supervisionSchema = z
  .strictObject({
    maxConsecutiveFailures: integerValue(1, 1000).prefault(8),
    pause: isoDuration().prefault('PT1S'),
    maxPause: isoDuration().prefault('PT1M'),
  })
  .transform((s): SupervisionConfig => ({ ...s }));

/* ---------------------------------------------------------------- cluster (run) */

const clusterSchema = z
  .strictObject({
    // How long a replica's claim on the account's work lasts without renewal (renewed every third).
    leaseTtl: isoDuration().prefault('PT30S'),
    // How often a standby replica tries to claim the work.
    claimInterval: isoDuration().prefault('PT5S'),
    // How often a replica says it is alive; it stops counting for fair share after 3 missed ones.
    heartbeat: isoDuration().prefault('PT10S'),
  })
  .superRefine((c, ctx) => {
    if (c.leaseTtl < 3_000) ctx.addIssue({ code: 'custom', path: ['leaseTtl'], message: 'must be at least PT3S (it is renewed every third of it)' });
  })
  .transform((c): ClusterConfig => ({ ...c }));

/* ---------------------------------------------------------------- reconcile (run) */

const reconcileSchema = z
  .strictObject({
    schedule: cronExpression().optional(),
    streams: z.array(z.enum(RECONCILE_STREAM_NAMES)).min(1).prefault([...RECONCILE_STREAM_NAMES]),
    days: integerValue(1, 3650).prefault(30),
    maxRequests: integerValue(1, 1_000_000).optional(),
    repair: booleanValue().prefault(false),
  })
  .transform((r): ReconcileConfig => {
    const out: ReconcileConfig = { streams: [...new Set(r.streams)], days: r.days, repair: r.repair };
    if (r.schedule !== undefined) out.schedule = r.schedule;
    if (r.maxRequests !== undefined) out.maxRequests = r.maxRequests;
    return out;
  });

/* ---------------------------------------------------------------- notifications (run) */

const notificationRateLimitSchema = z
  .strictObject({ maxMessages: integerValue(1, 10_000).prefault(10), per: isoDuration().prefault('PT1H') })
  .transform((r): NotificationRateLimit => ({ ...r }));

const channelBase = {
  name: nonEmptyString().meta({ description: 'Channel name, used in logs and the freight_sync_notifications_total metric.' }),
  rateLimit: notificationRateLimitSchema.optional().meta({ description: 'Overrides notifications.rateLimit for this channel.' }),
};

const emailAddress = () => z.string().trim().refine((value) => /^[^\s@]+@[^\s@]+$/.test(value), { message: 'expected an e-mail address such as ops@example.com' });

const channelSchema = z.discriminatedUnion('type', [
  z.strictObject({
    ...channelBase,
    type: z.literal('webhook').meta({ description: 'A generic JSON webhook: each message is POSTed as JSON.' }),
    url: httpUrl().meta({ description: 'Receiver URL (secret: masked in output, scrubbed from logs).' }),
    headers: z.record(z.string(), z.string()).prefault({}).meta({ description: 'Extra request headers, e.g. Authorization.' }),
  }),
  z.strictObject({
    ...channelBase,
    type: z.literal('slack').meta({ description: 'A Slack-compatible incoming webhook: POSTs { text, blocks }.' }),
    url: httpUrl().meta({ description: 'Incoming-webhook URL (secret: its token is in the path).' }),
  }),
  z.strictObject({
    ...channelBase,
    type: z.literal('email').meta({ description: 'E-mail over SMTP.' }),
    smtp: z
      .strictObject({
        host: nonEmptyString().meta({ description: 'SMTP server.' }),
        port: integerValue(1, 65_535).prefault(587),
        secure: booleanValue().prefault(false).meta({ description: 'true: TLS from the first byte (port 465); false: STARTTLS when offered.' }),
        username: nonEmptyString().optional().meta({ description: 'SMTP user.' }),
        password: nonEmptyString().optional().meta({ description: 'SMTP password (secret).' }),
      })
      .meta({ description: 'The SMTP server messages are sent through.' }),
    from: emailAddress().meta({ description: 'Sender address.' }),
    to: z.array(emailAddress()).min(1).meta({ description: 'Recipient addresses.' }),
  }),
]);

const notificationsSchema = z
  .strictObject({
    channels: z.array(channelSchema).prefault([]),
    interval: isoDuration().prefault('PT30S'),
    streamFailures: integerValue(1, 1000).prefault(3),
    lagThreshold: isoDuration().optional(),
    rateLimit: notificationRateLimitSchema.prefault({}),
    deliveryAttempts: integerValue(1, 100).prefault(3),
    deliveryTimeout: isoDuration().prefault('PT10S'),
  })
  .transform((n, ctx): NotificationsConfig => {
    const names = new Set<string>();
    n.channels.forEach((channel, index) => {
      if (names.has(channel.name)) ctx.addIssue({ code: 'custom', path: ['channels', index, 'name'], message: `channel name ${channel.name} is used twice` });
      names.add(channel.name);
    });
    const channels = n.channels.map((c): NotificationChannelConfig => {
      const { rateLimit, ...rest } = c;
      let channel: NotificationChannelConfig;
      if (rest.type === 'email') {
        const { username, password, ...smtp } = rest.smtp;
        channel = { ...rest, smtp: { ...smtp, ...(username === undefined ? {} : { username }), ...(password === undefined ? {} : { password }) } };
      } else {
        channel = rest;
      }
      if (rateLimit !== undefined) channel.rateLimit = rateLimit;
      return channel;
    });
    const out: NotificationsConfig = {
      channels,
      interval: n.interval,
      streamFailures: n.streamFailures,
      rateLimit: n.rateLimit,
      deliveryAttempts: n.deliveryAttempts,
      deliveryTimeout: n.deliveryTimeout,
    };
    if (n.lagThreshold !== undefined) out.lagThreshold = n.lagThreshold;
    return out;
  });

/* ---------------------------------------------------------------- root */

/**
 * The whole file. Cross-references between sections (sinks → connectors, …) are checked by
 * cross-checks.ts on the raw input, so they are reported even when this schema finds other
 * problems.
 */
export const configSchema: z.ZodType<FreightSyncConfig> = z.strictObject({
  api: apiSchema,
  state: stateSchema.prefault({}),
  log: logSchema.prefault({}),
  sync: syncSchema.prefault({}),
  connectors: z.record(z.string(), connectorSchema).prefault({}),
  outbound: outboundSchema.prefault({}),
  webhooks: webhooksSchema.prefault({}),
  http: httpSchema.prefault({}),
  supervision: supervisionSchema.prefault({}),
  cluster: clusterSchema.prefault({}),
  reconcile: reconcileSchema.prefault({}),
  notifications: notificationsSchema.prefault({}),
});

/** What the config file may contain before validation (loose: zod reports what is wrong). */
export type FreightSyncConfigInput = Record<string, unknown>;
