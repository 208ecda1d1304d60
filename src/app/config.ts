import { z } from 'zod';
import { parseEncryptionKey } from '../gating/linkedRoles/linkedRoles.ts';
import { isLoopbackHost, parseTrustProxy } from './hostAddresses.ts';
import { parseShardIds, shardIdsProblems } from './shardIds.ts';

/** Blank values count as unset, so `KEY=` in .env falls back to the default. */
const optionalText = z.preprocess(
  (v) => (typeof v === 'string' && v.trim() === '' ? undefined : v),
  z.string().trim().optional(),
);

const withDefault = <T extends z.ZodType>(schema: T, fallback: z.input<T>) =>
  z.preprocess(
    (v) => (typeof v === 'string' && v.trim() === '' ? undefined : v),
    schema.default(fallback as never),
  );

const seconds = (fallback: number) => withDefault(z.coerce.number().int().min(0).max(31_536_000), fallback);

const boolean = (fallback: boolean) =>
  z
    .preprocess((v) => (typeof v === 'string' && v.trim() === '' ? undefined : v), z.stringbool().optional())
    .transform((v) => v ?? fallback);

/** A TCP port, or unset (blank counts as unset). */
const optionalPort = z.preprocess(
  (v) => (typeof v === 'string' && v.trim() === '' ? undefined : v),
  z.coerce.number().int().min(0).max(65_535).optional(),
);

const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http(s) URL' });

/** A node or relay the bot trusts for answers: https, or http only to this machine (nothing to intercept). */
const nodeUrl = httpUrl.refine(
  (url) => new URL(url).protocol === 'https:' || isLoopbackHost(new URL(url).hostname),
  'must be an https:// URL (http:// only to this machine: 127.0.0.0/8, localhost or [::1])',
);

/** Every environment key the bot reads; `.env.example` documents each one. */
export const ConfigSchema = z.object({
  DISCORD_TOKEN: optionalText.pipe(
    z.string({ error: 'is required (the bot token from the Developer Portal)' }),
  ),
  DISCORD_APPLICATION_ID: optionalText.pipe(
    z
      .string({ error: 'is required (the application id)' })
      .regex(/^\d{17,20}$/, 'must be a Discord snowflake'),
  ),
  DISCORD_API_URL: optionalText.pipe(httpUrl.optional()),
  /** Discord's pages members' browsers open (OAuth2 authorize): its origin; default DISCORD_API_URL's, else Discord's. */
  DISCORD_WEB_URL: optionalText.pipe(httpUrl.optional()),
  DISCORD_CLIENT_SECRET: optionalText.pipe(
    z.string().min(8, 'must be the OAuth2 client secret (OAuth2 > Client Secret)').optional(),
  ),
  LINKED_ROLES_ENABLED: boolean(false),
  DISCORD_PUBLIC_KEY: optionalText.pipe(
    z
      .string()
      .regex(
        /^[0-9a-fA-F]{64}$/,
        'must be the application public key, 64 hex characters (General Information > Public Key)',
      )
      .transform((v) => v.toLowerCase())
      .optional(),
  ),
  TOKEN_ENCRYPTION_KEY: optionalText.pipe(
    z
      .string()
      .refine((v) => parseEncryptionKey(v) !== undefined, {
        error: 'must be 32 random bytes as 64 hex characters or base64 (openssl rand -hex 32)',
      })
      .optional(),
  ),
  DEV_GUILD_ID: optionalText.pipe(
    z
      .string()
      .regex(/^\d{17,20}$/, 'must be a Discord snowflake')
      .optional(),
  ),

  WEB3BIO_API_URL: withDefault(httpUrl, 'https://api.web3.bio'),
  WEB3BIO_API_KEY: optionalText,
  WEB3BIO_RATE_LIMIT: optionalText.pipe(
    z
      .string()
      .regex(/^(\d+)\/(\d+)s$|^off$/, 'must look like "5/10s" (requests per seconds) or "off"')
      .optional(),
  ),
  WEB3BIO_TIMEOUT_MS: withDefault(z.coerce.number().int().min(100).max(120_000), 10_000),
  WEB3BIO_CONCURRENCY: withDefault(z.coerce.number().int().min(1).max(256), 8),

  CACHE_MAX_ENTRIES: withDefault(z.coerce.number().int().min(100), 50_000),
  CACHE_MAX_MB: withDefault(z.coerce.number().int().min(1), 64),
  CACHE_TTL_PROFILE_SECONDS: seconds(7_200),
  CACHE_TTL_CREDENTIAL_SECONDS: seconds(7_200),
  CACHE_TTL_DOMAIN_SECONDS: seconds(900),
  CACHE_TTL_AVATAR_SECONDS: seconds(86_400),
  CACHE_TTL_WALLET_SECONDS: seconds(600),
  CACHE_NEGATIVE_TTL_SECONDS: seconds(60),
  CACHE_STALE_IF_ERROR_SECONDS: seconds(86_400),
  REDIS_URL: optionalText.pipe(z.url({ protocol: /^rediss?$/, error: 'must be a redis:// URL' }).optional()),
  REDIS_PREFIX: withDefault(z.string().max(100), 'web3bio:'),
  CACHE_L1_TTL_SECONDS: withDefault(z.coerce.number().min(0).max(3_600), 30),
  CACHE_FILL_LOCK_SECONDS: withDefault(z.coerce.number().min(0).max(300), 10),

  IPFS_GATEWAY: withDefault(httpUrl, 'https://ipfs.io'),
  USER_COOLDOWN_COMMANDS: withDefault(z.coerce.number().int().min(0).max(1_000), 5),
  USER_COOLDOWN_SECONDS: withDefault(z.coerce.number().int().min(1).max(3_600), 30),
  INTERACTIONS: withDefault(z.enum(['gateway', 'http']), 'gateway'),
  PROCESS_ROLE: withDefault(z.enum(['all', 'web', 'gateway', 'rest-proxy']), 'all'),
  /** PROCESS_ROLE=rest-proxy: where the bot's one Discord REST proxy listens (restProxy.ts). */
  REST_PROXY_HOST: withDefault(z.string(), '127.0.0.1'),
  REST_PROXY_PORT: withDefault(z.coerce.number().int().min(0).max(65_535), 8_080),
  DEFER_AFTER_MS: withDefault(z.coerce.number().int().min(0).max(2_500), 1_200),

  DATA_DIR: withDefault(z.string(), './data'),
  DATABASE_URL: optionalText.pipe(
    z.url({ protocol: /^postgres(ql)?$/, error: 'must be a postgres:// URL' }).optional(),
  ),
  HTTP_PORT: optionalPort,
  HTTP_HOST: withDefault(z.string(), '0.0.0.0'),
  /**
   * The reverse proxies in front of HTTP_PORT: a hop count (`1`), or their addresses or CIDR ranges,
   * comma-separated. Unset: X-Forwarded-For is ignored and the TCP peer is the client.
   */
  TRUST_PROXY: optionalText.pipe(
    z
      .string()
      .transform((value, ctx) => {
        const parsed = parseTrustProxy(value);
        if (parsed !== undefined) return parsed;
        ctx.addIssue({
          code: 'custom',
          message: 'must be a hop count (1-10) or a comma-separated list of proxy addresses or CIDR ranges',
        });
        return z.NEVER;
      })
      .optional(),
  ),
  /**
   * Discord's signed POSTs (`/interactions`, the webhook events): how long a body may take once its headers
   * are in (Discord sends it at once; a late one is refused and counted against the client), and how many
   * MiB of bodies one client may have in flight of the process's 16.
   */
  DELIVERY_BODY_TIMEOUT_MS: withDefault(z.coerce.number().int().min(500).max(15_000), 3_000),
  DELIVERY_MB_PER_CLIENT: withDefault(z.coerce.number().int().min(1).max(16), 2),
  PUBLIC_URL: optionalText.pipe(httpUrl.optional()),
  RPC_URL: optionalText.pipe(nodeUrl.optional()),
  /** Sign in with Farcaster: the relay the bot opens channels on (Farcaster's public one by default). */
  FARCASTER_RELAY_URL: withDefault(nodeUrl, 'https://relay.farcaster.xyz'),
  /** An OP Mainnet JSON-RPC node: who holds each FID. Unset, Sign in with Farcaster is not offered. */
  OPTIMISM_RPC_URL: optionalText.pipe(nodeUrl.optional()),
  /** Holdings rules (issue #35): each chain is offered only with its node's URL (RPC_URL and OPTIMISM_RPC_URL too). */
  BASE_RPC_URL: optionalText.pipe(nodeUrl.optional()),
  ARBITRUM_RPC_URL: optionalText.pipe(nodeUrl.optional()),
  POLYGON_RPC_URL: optionalText.pipe(nodeUrl.optional()),
  LINEA_RPC_URL: optionalText.pipe(nodeUrl.optional()),
  SOLANA_RPC_URL: optionalText.pipe(nodeUrl.optional()),
  /** Requests a second the bot sends each chain's node for holdings rules (the node's own rate limit). */
  HOLDINGS_RPC_REQUESTS_PER_SECOND: withDefault(z.coerce.number().int().min(1).max(1_000), 10),
  GATING_ENABLED: boolean(false),
  GATING_RECHECK_HOURS: withDefault(
    z.coerce
      .number()
      .min(0.01)
      .max(24 * 30),
    24,
  ),
  GATING_LEASE_SECONDS: withDefault(z.coerce.number().int().min(1).max(3_600), 60),
  /** How often the due-check pass syncs members whose time has come (old enough; a proof whose sync failed). */
  GATING_DUE_CHECK_SECONDS: withDefault(z.coerce.number().int().min(1).max(3_600), 60),
  /** How often each gateway process picks up sharing turned on elsewhere (`/verify share:all-servers`). */
  GATING_SHARING_PICKUP_SECONDS: withDefault(z.coerce.number().int().min(1).max(3_600), 30),
  GATING_CONFIRM_MINUTES: withDefault(
    z.coerce
      .number()
      .min(0)
      .max(7 * 24 * 60),
    60,
  ),
  AUDIT_RETENTION_DAYS: withDefault(z.coerce.number().int().min(1).max(3_650), 180),
  /** The owners' dashboard at PUBLIC_URL/dashboard (needs gating, DISCORD_CLIENT_SECRET, TOKEN_ENCRYPTION_KEY). */
  DASHBOARD_ENABLED: boolean(false),
  /** How old an account's server list (its rights) may get before the dashboard reads it again: 60 s at most. */
  DASHBOARD_RIGHTS_SECONDS: withDefault(z.coerce.number().int().min(1).max(60), 60),

  SHARD_COUNT: z.preprocess(
    (v) => (typeof v === 'string' && v.trim() === '' ? undefined : v),
    z
      .union([z.literal('auto'), z.coerce.number().int().min(1).max(16_384)], {
        error: 'must be auto or a whole number of shards',
      })
      .optional(),
  ),
  /** Which of SHARD_COUNT's shards this machine runs (`0-15`, `0,2,4`): one bot's shards over machines. */
  SHARD_IDS: optionalText.transform((text, ctx) => {
    const parsed = text === undefined ? undefined : parseShardIds(text);
    if (parsed?.ok === false) ctx.addIssue({ code: 'custom', message: parsed.problem });
    return parsed?.ok ? parsed.ids : undefined;
  }),
  SHARDS_PER_PROCESS: z.preprocess(
    (v) => (typeof v === 'string' && v.trim() === '' ? undefined : v),
    z.coerce.number().int().min(1).max(16_384).optional(),
  ),
  SHARD_SPAWN_DELAY_SECONDS: withDefault(z.coerce.number().min(0).max(600), 7),
  SHARD_RESTARTS_PER_HOUR: withDefault(z.coerce.number().int().min(0).max(1_000), 10),

  METRICS_PORT: optionalPort,
  METRICS_HOST: withDefault(z.string(), '127.0.0.1'),
  METRICS_TOKEN: optionalText.pipe(z.string().min(16, 'must be at least 16 characters').optional()),

  LOG_LEVEL: withDefault(z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']), 'info'),
});

export type Config = z.output<typeof ConfigSchema>;

/**
 * The one list of config keys that hold secrets: a key's whole value, or for a URL its password. Every
 * logger, CLI and preview scrubs these (see `configSecrets`). A new secret key (DISCORD_CLIENT_SECRET,
 * TOKEN_ENCRYPTION_KEY…) goes here; a test fails for a key whose name says secret but is not listed.
 */
export const SECRET_KEYS = [
  'DISCORD_TOKEN',
  'DISCORD_CLIENT_SECRET',
  'TOKEN_ENCRYPTION_KEY',
  'WEB3BIO_API_KEY',
  'DATABASE_URL',
  'REDIS_URL',
  'METRICS_TOKEN',
] as const satisfies readonly (keyof Config)[];

/** Shorter values are not treated as secrets (see `configSecrets`). */
export const MIN_SECRET_LENGTH = 6;

/** The password in a URL, as written and decoded; none when it has none. */
function urlPasswords(url: string): string[] {
  if (!URL.canParse(url)) return [];
  const raw = new URL(url).password;
  if (raw === '') return [];
  try {
    return [raw, decodeURIComponent(raw)];
  } catch {
    return [raw];
  }
}

/**
 * Every secret value the config holds: the SECRET_KEYS values (for URL keys, their passwords) and the
 * password of any other URL in it (an RPC_URL with credentials, say). For loggers and printed output.
 */
export function configSecrets(config: Partial<Record<keyof Config, unknown>>): string[] {
  const secrets = new Set<string>();
  for (const [key, value] of Object.entries(config)) {
    if (typeof value !== 'string' || value === '') continue;
    const isSecret = (SECRET_KEYS as readonly string[]).includes(key);
    if (key.endsWith('_URL')) for (const password of urlPasswords(value)) secrets.add(password);
    else if (isSecret) secrets.add(value);
  }
  // A placeholder such as '-' is no secret, and scrubbing it would mangle ordinary text.
  return [...secrets].filter((secret) => secret.length >= MIN_SECRET_LENGTH);
}

export class ConfigError extends Error {
  readonly problems: string[];
  constructor(problems: string[]) {
    super(
      `Invalid configuration (see .env.example for every key):\n${problems.map((p) => `  - ${p}`).join('\n')}`,
    );
    this.name = 'ConfigError';
    this.problems = problems;
  }
}

/** Parse the environment once, listing every bad or missing key at once. Never echoes values. */
export function loadConfig(env: Record<string, string | undefined>): Config {
  const result = ConfigSchema.safeParse(env);
  const problems = result.success
    ? []
    : result.error.issues.map((i) => `${i.path.join('.') || '(root)'} ${i.message}`);
  const gatingOn = z.stringbool().safeParse(env.GATING_ENABLED?.trim() || 'false');
  if (gatingOn.success && gatingOn.data && !env.PUBLIC_URL?.trim()) {
    problems.push('PUBLIC_URL is required when GATING_ENABLED=true (the address members open to sign)');
  }
  const linkedRolesOn = z.stringbool().safeParse(env.LINKED_ROLES_ENABLED?.trim() || 'false');
  if (linkedRolesOn.success && linkedRolesOn.data) {
    const missing = (['DISCORD_CLIENT_SECRET', 'TOKEN_ENCRYPTION_KEY', 'PUBLIC_URL'] as const).filter(
      (key) => !env[key]?.trim(),
    );
    if (missing.length > 0) {
      problems.push(
        `LINKED_ROLES_ENABLED=true needs ${missing.join(', ')} (the OAuth2 secret, the key that seals stored refresh tokens, the verification URL's base)`,
      );
    }
  }
  const dashboardOn = z.stringbool().safeParse(env.DASHBOARD_ENABLED?.trim() || 'false');
  if (dashboardOn.success && dashboardOn.data) {
    const missing = (['DISCORD_CLIENT_SECRET', 'TOKEN_ENCRYPTION_KEY', 'PUBLIC_URL'] as const).filter(
      (key) => !env[key]?.trim(),
    );
    if (!(gatingOn.success && gatingOn.data)) missing.unshift('GATING_ENABLED=true' as never);
    if (missing.length > 0) {
      problems.push(
        `DASHBOARD_ENABLED=true needs ${missing.join(', ')} (the dashboard shows a server's gating; Discord sign-in needs the OAuth2 secret; the key seals the session; PUBLIC_URL/dashboard/callback is the redirect)`,
      );
    }
  }
  const gatingOrLinked = (gatingOn.success && gatingOn.data) || (linkedRolesOn.success && linkedRolesOn.data);
  if (env.SHARD_COUNT?.trim() && gatingOrLinked && !env.DATABASE_URL?.trim()) {
    problems.push(
      'SHARD_COUNT with gating or Linked Roles needs DATABASE_URL (every shard process shares one PostgreSQL store)',
    );
  }
  problems.push(...shardIdsProblems(env));
  if (env.INTERACTIONS?.trim() === 'http') {
    const missing = (['DISCORD_PUBLIC_KEY', 'PUBLIC_URL'] as const).filter((key) => !env[key]?.trim());
    if (missing.length > 0) {
      problems.push(
        `INTERACTIONS=http needs ${missing.join(' and ')}: Discord signs each interaction with the app's public key (General Information > Public Key), and POSTs it to PUBLIC_URL/interactions (set that as the Interactions Endpoint URL)`,
      );
    }
  } else if (!['', 'all', 'rest-proxy'].includes(env.PROCESS_ROLE?.trim() ?? '')) {
    problems.push(
      'PROCESS_ROLE=web or gateway splits INTERACTIONS=http deployments: set INTERACTIONS=http too',
    );
  }
  if (env.PROCESS_ROLE?.trim() === 'web' && env.SHARD_COUNT?.trim()) {
    problems.push(
      'PROCESS_ROLE=web opens no gateway connection: SHARD_COUNT belongs to the PROCESS_ROLE=gateway worker',
    );
  }
  if (env.PROCESS_ROLE?.trim() === 'web' && gatingOrLinked && !env.DATABASE_URL?.trim()) {
    problems.push(
      'PROCESS_ROLE=web with gating or Linked Roles needs DATABASE_URL: web replicas and the gateway worker share one PostgreSQL store',
    );
  }
  if (env.PROCESS_ROLE?.trim() === 'web' && !env.REDIS_URL?.trim()) {
    problems.push(
      'PROCESS_ROLE=web needs REDIS_URL: web replicas share the deliveries they acted on there, so a delivery replayed to another replica is refused',
    );
  }
  const role = env.PROCESS_ROLE?.trim();
  const split = env.INTERACTIONS?.trim() === 'http' && (role === 'web' || role === 'gateway');
  if (split && gatingOn.success && gatingOn.data && !env.TOKEN_ENCRYPTION_KEY?.trim()) {
    problems.push(
      `PROCESS_ROLE=${role} with gating needs TOKEN_ENCRYPTION_KEY (the same on every replica and the gateway worker): the interaction tokens replicas hand to the worker are sealed with it in PostgreSQL`,
    );
  }
  const metricsHost = env.METRICS_HOST?.trim() || '127.0.0.1';
  if (env.METRICS_PORT?.trim() && !env.METRICS_TOKEN?.trim() && !isLoopbackHost(metricsHost)) {
    problems.push(
      `METRICS_HOST=${metricsHost} would serve /metrics and /readyz beyond this machine without a token: set METRICS_TOKEN, or METRICS_HOST=127.0.0.1`,
    );
  }
  if (!result.success || problems.length > 0) throw new ConfigError(problems);
  return result.data;
}

/** Whether this process is a web replica (no gateway connection) rather than a bot (bot.ts). */
export function runsAsWebReplica(
  config: Pick<Config, 'INTERACTIONS' | 'PROCESS_ROLE' | 'GATING_ENABLED'>,
): boolean {
  if (config.INTERACTIONS !== 'http') return false;
  return config.PROCESS_ROLE === 'web' || (config.PROCESS_ROLE === 'all' && !config.GATING_ENABLED);
}

/** Where the gating signing page listens when HTTP_PORT is unset. */
export const DEFAULT_HTTP_PORT = 8_080;

/** `WEB3BIO_RATE_LIMIT` as the client's option: unset picks the client's default for the key state. */
export function rateLimitOption(
  value: string | undefined,
): { requests: number; intervalMs: number } | null | undefined {
  if (value === undefined) return undefined;
  if (value === 'off') return null;
  const [requests, secondsText] = value.slice(0, -1).split('/');
  return { requests: Number(requests), intervalMs: Number(secondsText) * 1_000 };
}
