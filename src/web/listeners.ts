/**
 * The process's listeners from config. The pages' web server on HTTP_HOST:HTTP_PORT (gating or Linked
 * Roles on); otherwise an ops listener there when HTTP_PORT is set; and METRICS_HOST:METRICS_PORT when
 * METRICS_PORT is set, where `/metrics` then lives alone. `/readyz` and `/metrics` need METRICS_TOKEN
 * everywhere but on a loopback METRICS_PORT listener (ops.ts). With REDIS_URL, the limits are shared
 * through Redis and `/readyz` also pings it.
 */
import type { Redis } from 'ioredis';
import type { Config } from '../app/config.ts';
import { isLoopbackHost } from '../app/hostAddresses.ts';
import { closeRedisClient, createRedisClient, untilRedisReady } from '../cache/redisStore.ts';
import type { Logger } from '../ops/log.ts';
import type { InteractionEndpoint } from './interactions.ts';
import type { MetricsSource, ReadinessCheck } from './ops.ts';
import { startWebServer, type WebServer, type WebServerOptions } from './server.ts';

/** What a process's ops listeners check and report. */
export interface OpsChecks {
  readiness: Record<string, ReadinessCheck>;
  beforeScrape: () => Promise<void>;
  registry: MetricsSource;
  /**
   * Whether HTTP_PORT is the ops listener's (true) or the pages' web server's, which answers `/healthz`
   * itself (gating or Linked Roles on).
   */
  publicPort: boolean;
}

export interface OpsServers {
  url?: string;
  metricsUrl?: string;
  close(): Promise<void>;
}

/** The settings every listener of this process shares: TRUST_PROXY, Redis for the limits, the signed bodies'. */
export function webSettings(
  config: Pick<Config, WebSettingKeys>,
  redis: Redis | undefined,
): Pick<WebServerOptions, 'trustProxy' | 'redis' | 'deliveries'> {
  return {
    trustProxy: config.TRUST_PROXY,
    redis: redis ? { client: redis, prefix: config.REDIS_PREFIX } : undefined,
    deliveries: {
      bodyTimeoutMs: config.DELIVERY_BODY_TIMEOUT_MS,
      bytesPerClient: config.DELIVERY_MB_PER_CLIENT * 1024 * 1024,
    },
  };
}

/** The config keys `webSettings` reads. */
export type WebSettingKeys =
  | 'TRUST_PROXY'
  | 'REDIS_PREFIX'
  | 'DELIVERY_BODY_TIMEOUT_MS'
  | 'DELIVERY_MB_PER_CLIENT';

export async function startOpsServers(
  input: OpsChecks & {
    config: Pick<
      Config,
      | 'HTTP_PORT'
      | 'HTTP_HOST'
      | 'METRICS_PORT'
      | 'METRICS_HOST'
      | 'METRICS_TOKEN'
      | 'REDIS_URL'
      | WebSettingKeys
    >;
    logger: Logger;
    /** INTERACTIONS=http without the pages' server: `POST /interactions` on the HTTP_PORT listener. */
    interactions?: InteractionEndpoint;
  },
): Promise<OpsServers> {
  const { config, logger } = input;
  const publicPort = input.publicPort ? config.HTTP_PORT : undefined;
  if (publicPort === undefined && config.METRICS_PORT === undefined) return { close: async () => {} };
  const redis = config.REDIS_URL === undefined ? undefined : createRedisClient(config.REDIS_URL);
  // Listening before Redis answers would judge the first deliveries by this process's empty set, as in an
  // outage: a replay of one another replica acted on, sent as this one starts, was acted on again. Wait
  // for it briefly, as the pages' server does; a Redis that is down is waited for no longer.
  if (redis) await untilRedisReady(redis);
  const readiness = { ...input.readiness };
  if (redis) readiness.redis = async () => void (await redis.ping());
  const opsLogger = logger.child({ module: 'http' });
  const common = {
    readiness,
    beforeScrape: input.beforeScrape,
    metricsToken: config.METRICS_TOKEN,
    logger: opsLogger,
  };
  const servers: WebServer[] = [];
  const close = async () => {
    for (const server of servers.splice(0)) {
      await server
        .close()
        .catch((error: unknown) => logger.warn({ err: error }, 'could not stop the ops server'));
    }
    if (redis) await closeRedisClient(redis);
  };
  try {
    if (publicPort !== undefined) {
      servers.push(
        await startWebServer({
          ...webSettings(config, redis),
          port: publicPort,
          host: config.HTTP_HOST,
          logger: opsLogger,
          ...(input.interactions ? { interactions: input.interactions } : {}),
          ops: {
            ...common,
            metrics: config.METRICS_PORT === undefined ? input.registry : false,
            openWithoutToken: false,
          },
        }),
      );
    }
    if (config.METRICS_PORT !== undefined) {
      servers.push(
        await startWebServer({
          ...webSettings(config, redis),
          port: config.METRICS_PORT,
          host: config.METRICS_HOST,
          logger: opsLogger,
          ops: { ...common, metrics: input.registry, openWithoutToken: isLoopbackHost(config.METRICS_HOST) },
        }),
      );
    }
    const main = publicPort === undefined ? undefined : servers[0];
    const separate = config.METRICS_PORT === undefined ? undefined : servers.at(-1);
    if (config.METRICS_TOKEN === undefined && config.METRICS_PORT === undefined)
      logger.info(
        {},
        '/readyz and /metrics are off: set METRICS_TOKEN, or METRICS_PORT for a loopback listener',
      );
    logger.info({ url: main?.url, metricsUrl: separate?.url }, 'http server listening');
    return {
      ...(main ? { url: main.url } : {}),
      ...(separate ? { metricsUrl: separate.url } : {}),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** The pages' web server (signing page, Linked Roles, webhook events) from config, with its own Redis client. */
export async function startPagesServer(
  config: Pick<Config, 'HTTP_PORT' | 'HTTP_HOST' | 'REDIS_URL' | WebSettingKeys>,
  pages: Omit<WebServerOptions, 'port' | 'host' | 'trustProxy' | 'redis' | 'deliveries'>,
  defaultPort: number,
): Promise<WebServer> {
  const redis = config.REDIS_URL === undefined ? undefined : createRedisClient(config.REDIS_URL);
  try {
    // Limits counted before Redis answers would count nothing: wait for it briefly.
    if (redis) await untilRedisReady(redis);
    const server = await startWebServer({
      ...pages,
      ...webSettings(config, redis),
      port: config.HTTP_PORT ?? defaultPort,
      host: config.HTTP_HOST,
    });
    return {
      ...server,
      close: async () => {
        await server.close();
        if (redis) await closeRedisClient(redis);
      },
    };
  } catch (error) {
    if (redis) await closeRedisClient(redis);
    throw error;
  }
}
