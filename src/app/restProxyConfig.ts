import type { z } from 'zod';
import { ConfigError, ConfigSchema } from './config.ts';

/**
 * What PROCESS_ROLE=rest-proxy reads, and nothing else: the bot's token (to tell its callers from another
 * bot's), Discord's address, where to listen, how much to log, and where the container's health check
 * reads its heartbeat (DATA_DIR, default ./data). No Redis, database or Web3.bio.
 */
export const RestProxyConfigSchema = ConfigSchema.pick({
  DISCORD_TOKEN: true,
  DISCORD_API_URL: true,
  REST_PROXY_HOST: true,
  REST_PROXY_PORT: true,
  LOG_LEVEL: true,
  DATA_DIR: true,
});

export type RestProxyConfig = z.output<typeof RestProxyConfigSchema>;

/** Parse the proxy's keys once, listing every bad or missing one at once. Never echoes values. */
export function loadRestProxyConfig(env: Record<string, string | undefined>): RestProxyConfig {
  const result = RestProxyConfigSchema.safeParse(env);
  if (result.success) return result.data;
  throw new ConfigError(
    result.error.issues.map(
      (issue) => `${issue.path.join('.') || '(root)'} ${issue.message} (PROCESS_ROLE=rest-proxy)`,
    ),
  );
}
