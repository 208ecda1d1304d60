/** The gating settings every process that serves gating or its pages reads: the store, sign-in and SIWE. */
import { DEFAULT_DISCORD_API_URL, type DiscordOAuthConfig } from '../discord/oauth.ts';
import type { DashboardOperations } from '../gating/dashboard/types.ts';
import { parseEncryptionKey } from '../gating/linkedRoles/linkedRoles.ts';
import type { SiweConfig } from '../gating/proofs/challengeMessage.ts';
import type { FarcasterConfig } from '../gating/proofs/farcasterSignIn.ts';
import type { Logger } from '../ops/log.ts';
import { openStore } from '../store/index.ts';
import type { GatingStore } from '../store/types.ts';
import type { DashboardSetup } from '../web/dashboard/routes.ts';
import type { Config } from './config.ts';

/** Start-up's word when OPTIMISM_RPC_URL is set without the Discord sign-in. */
export const FARCASTER_NEEDS_DISCORD_SIGN_IN =
  'Sign in with Farcaster is off: it needs DISCORD_CLIENT_SECRET (the Discord sign-in) beside OPTIMISM_RPC_URL, because only the sign-in ties a Farcaster page to the member it was made for: without it, a forwarded page would prove the FID of whoever opened it for the member who sent it';

export type GatingConfig = Pick<
  Config,
  | 'DATA_DIR'
  | 'DATABASE_URL'
  | 'HTTP_HOST'
  | 'HTTP_PORT'
  | 'PUBLIC_URL'
  | 'RPC_URL'
  | 'FARCASTER_RELAY_URL'
  | 'OPTIMISM_RPC_URL'
  | 'BASE_RPC_URL'
  | 'ARBITRUM_RPC_URL'
  | 'POLYGON_RPC_URL'
  | 'LINEA_RPC_URL'
  | 'SOLANA_RPC_URL'
  | 'HOLDINGS_RPC_REQUESTS_PER_SECOND'
  | 'DISCORD_APPLICATION_ID'
  | 'DISCORD_API_URL'
  | 'DISCORD_WEB_URL'
  | 'DISCORD_CLIENT_SECRET'
  | 'DISCORD_PUBLIC_KEY'
  | 'LINKED_ROLES_ENABLED'
  | 'TOKEN_ENCRYPTION_KEY'
  | 'GATING_RECHECK_HOURS'
  | 'GATING_LEASE_SECONDS'
  | 'GATING_DUE_CHECK_SECONDS'
  | 'GATING_SHARING_PICKUP_SECONDS'
  | 'GATING_CONFIRM_MINUTES'
  | 'AUDIT_RETENTION_DAYS'
  | 'REDIS_URL'
  | 'REDIS_PREFIX'
  | 'TRUST_PROXY'
  | 'DELIVERY_BODY_TIMEOUT_MS'
  | 'DELIVERY_MB_PER_CLIENT'
  | 'DASHBOARD_ENABLED'
  | 'DASHBOARD_RIGHTS_SECONDS'
>;

/**
 * The OAuth2 client (with DISCORD_CLIENT_SECRET), the SIWE settings and Sign in with Farcaster's (with
 * OPTIMISM_RPC_URL) that both gating and the shard manager use. Farcaster needs the Discord sign-in too
 * (only it ties the page to the member it was made for): without it, it is off and `logger` is told why.
 */
export function signInConfig(
  config: GatingConfig & { PUBLIC_URL: string },
  logger?: Pick<Logger, 'warn'>,
): {
  oauth: DiscordOAuthConfig | undefined;
  key: Buffer | undefined;
  siwe: SiweConfig;
  farcaster: FarcasterConfig | undefined;
} {
  const oauth: DiscordOAuthConfig | undefined = config.DISCORD_CLIENT_SECRET
    ? {
        clientId: config.DISCORD_APPLICATION_ID,
        clientSecret: config.DISCORD_CLIENT_SECRET,
        apiUrl: config.DISCORD_API_URL ?? DEFAULT_DISCORD_API_URL,
        ...(config.DISCORD_WEB_URL ? { webUrl: config.DISCORD_WEB_URL } : {}),
        publicUrl: config.PUBLIC_URL,
        ...(config.DISCORD_PUBLIC_KEY ? { publicKey: config.DISCORD_PUBLIC_KEY } : {}),
      }
    : undefined;
  const key = config.TOKEN_ENCRYPTION_KEY ? parseEncryptionKey(config.TOKEN_ENCRYPTION_KEY) : undefined;
  if (config.LINKED_ROLES_ENABLED && !(oauth && key)) {
    throw new Error('LINKED_ROLES_ENABLED=true needs DISCORD_CLIENT_SECRET and TOKEN_ENCRYPTION_KEY');
  }
  const siwe: SiweConfig = {
    publicUrl: config.PUBLIC_URL,
    ...(config.RPC_URL ? { rpcUrl: config.RPC_URL } : {}),
    discordSignIn: oauth !== undefined,
  };
  if (config.OPTIMISM_RPC_URL && !oauth) logger?.warn({}, FARCASTER_NEEDS_DISCORD_SIGN_IN);
  const farcaster =
    config.OPTIMISM_RPC_URL && oauth
      ? { relayUrl: config.FARCASTER_RELAY_URL, rpcUrl: config.OPTIMISM_RPC_URL }
      : undefined;
  return { oauth, key, siwe, farcaster };
}

/**
 * The owners' dashboard for the pages' server, when DASHBOARD_ENABLED: its sign-in, key and store, and how
 * its requests reach the process that owns each guild (`operations`).
 */
export function dashboardSetup(
  config: Pick<GatingConfig, 'DASHBOARD_ENABLED' | 'DASHBOARD_RIGHTS_SECONDS'>,
  signIn: { oauth: DiscordOAuthConfig | undefined; key: Buffer | undefined },
  store: GatingStore,
  operations: DashboardOperations,
): DashboardSetup | undefined {
  if (!config.DASHBOARD_ENABLED || !signIn.oauth || !signIn.key) return undefined;
  return {
    store,
    oauth: signIn.oauth,
    key: signIn.key,
    operations,
    rightsMaxAgeMs: config.DASHBOARD_RIGHTS_SECONDS * 1_000,
  };
}

/** The gating store from config (PostgreSQL with DATABASE_URL, else SQLite under DATA_DIR). */
export function openGatingStore(config: GatingConfig): Promise<GatingStore> {
  return openStore(
    { databaseUrl: config.DATABASE_URL, dataDir: config.DATA_DIR },
    { leaseMs: config.GATING_LEASE_SECONDS * 1_000 },
  );
}

/**
 * TOKEN_ENCRYPTION_KEY as the interaction hand-offs use it: a replica seals each token with it, the
 * gateway worker opens them (loadConfig requires it of both when gating is on).
 */
export function handoffKey(config: Pick<Config, 'TOKEN_ENCRYPTION_KEY'>): Buffer {
  const key = config.TOKEN_ENCRYPTION_KEY ? parseEncryptionKey(config.TOKEN_ENCRYPTION_KEY) : undefined;
  if (!key) throw new Error('handing interactions over needs TOKEN_ENCRYPTION_KEY');
  return key;
}
