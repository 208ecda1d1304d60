/**
 * The operator's HTTP surface: `GET /healthz` (the process is alive), `GET /readyz` (gateway ready,
 * store and Redis reachable) and `GET /metrics` (Prometheus), optionally behind a bearer token.
 */
import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';
import type { Config } from '../app/config.ts';
import { closeRedisClient, createRedisClient } from '../cache/redisStore.ts';
import type { Logger } from '../ops/log.ts';
import { listenHttp } from './listen.ts';

/** What `/metrics` serves: a prom-client registry, or anything that writes the same text (the shard manager's sum). */
export type MetricsSource = Pick<Registry, 'metrics' | 'contentType'>;

/** One readiness check: resolves when the dependency answers; rejects or times out when it does not. */
export type ReadinessCheck = () => Promise<void> | void;

export interface OpsServerOptions {
  port: number;
  host: string;
  /** Serve `/metrics` here (false: it is served on another listener, e.g. one bound to METRICS_HOST). */
  metrics: MetricsSource | false;
  /** Runs before each scrape to refresh gauges read on demand (gateway ping, queue depth). */
  beforeScrape?: () => Promise<void>;
  /** When set, `/metrics` answers 401 without `Authorization: Bearer <token>`. */
  metricsToken?: string | undefined;
  /** Named checks for `/readyz`; all must pass. */
  readiness: Record<string, ReadinessCheck>;
  logger?: { warn(obj: object, msg?: string): void };
}

export interface OpsServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

/** A readiness check that has not answered in this long counts as failed. */
const CHECK_TIMEOUT_MS = 2_000;

export async function startOpsServer(options: OpsServerOptions): Promise<OpsServer> {
  const server = createServer((req, res) => {
    route(req, res, options).catch((error: unknown) => {
      options.logger?.warn({ err: error, path: pathOf(req) }, 'ops server request failed');
      if (!res.headersSent) send(res, 500, 'error\n');
      else res.destroy();
    });
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 15_000;
  const { url, port } = await listenHttp(server, options.port, options.host);
  return {
    url,
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

/**
 * Answers `/healthz`, `/readyz` and `/metrics` and resolves true; resolves false for any other request,
 * untouched, so another server (the verification server) can mount these routes before its own.
 */
export async function handleOpsRequest(
  req: IncomingMessage,
  res: ServerResponse,
  options: Pick<OpsServerOptions, 'metrics' | 'beforeScrape' | 'metricsToken' | 'readiness'>,
): Promise<boolean> {
  const path = pathOf(req);
  const readOnly = req.method === 'GET' || req.method === 'HEAD';
  if (!readOnly) return false;
  if (path === '/healthz') send(res, 200, 'ok');
  else if (path === '/readyz') {
    const failed = await failedChecks(options.readiness);
    const body = failed.length === 0 ? 'ready\n' : `not ready: ${failed.join(', ')}\n`;
    send(res, failed.length === 0 ? 200 : 503, body);
  } else if (path === '/metrics' && options.metrics !== false) {
    if (!authorized(req, options.metricsToken)) {
      res.setHeader('www-authenticate', 'Bearer');
      send(res, 401, 'unauthorized\n');
      return true;
    }
    await options.beforeScrape?.().catch(() => undefined);
    const text = await options.metrics.metrics();
    res.writeHead(200, { 'content-type': options.metrics.contentType, 'cache-control': 'no-store' });
    res.end(text);
  } else return false;
  return true;
}

async function route(req: IncomingMessage, res: ServerResponse, options: OpsServerOptions): Promise<void> {
  if (!(await handleOpsRequest(req, res, options))) send(res, 404, 'not found\n');
}

/** The names of the checks that failed or did not answer in time. */
async function failedChecks(checks: Record<string, ReadinessCheck>): Promise<string[]> {
  const names = Object.keys(checks);
  const results = await Promise.allSettled(
    names.map(
      (name) =>
        new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error('timeout')), CHECK_TIMEOUT_MS);
          Promise.resolve()
            .then(() => checks[name]?.())
            .then(resolve, reject)
            .finally(() => clearTimeout(timer));
        }),
    ),
  );
  return names.filter((_, i) => results[i]?.status === 'rejected');
}

function authorized(req: IncomingMessage, token: string | undefined): boolean {
  if (token === undefined) return true;
  const given = Buffer.from(req.headers.authorization ?? '');
  const wanted = Buffer.from(`Bearer ${token}`);
  return given.length === wanted.length && timingSafeEqual(given, wanted);
}

function send(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, {
    'content-type': 'text/plain; charset=utf-8',
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  });
  res.end(body);
}

function pathOf(req: IncomingMessage): string {
  return (req.url ?? '/').split('?', 1)[0] ?? '/';
}

/** What a process's ops servers check and report. */
export interface OpsChecks {
  readiness: Record<string, ReadinessCheck>;
  beforeScrape: () => Promise<void>;
  registry: MetricsSource;
  /**
   * Whether HTTP_PORT is the ops server's (true) or the verification server's, which answers `/healthz`
   * itself (gating or Linked Roles on).
   */
  publicPort: boolean;
}

export interface OpsServers {
  url?: string;
  metricsUrl?: string;
  close(): Promise<void>;
}

/**
 * The ops servers from config: on HTTP_HOST:HTTP_PORT when that port is ours and set, and on
 * METRICS_HOST:METRICS_PORT when METRICS_PORT is set; `/metrics` is then served there only, off the
 * public port. With REDIS_URL, `/readyz` also pings Redis.
 */
export async function startOpsServers(
  input: OpsChecks & {
    config: Pick<
      Config,
      'HTTP_PORT' | 'HTTP_HOST' | 'METRICS_PORT' | 'METRICS_HOST' | 'METRICS_TOKEN' | 'REDIS_URL'
    >;
    logger: Logger;
  },
): Promise<OpsServers> {
  const { config, logger } = input;
  const publicPort = input.publicPort ? config.HTTP_PORT : undefined;
  if (publicPort === undefined && config.METRICS_PORT === undefined) return { close: async () => {} };
  const redis = config.REDIS_URL === undefined ? undefined : createRedisClient(config.REDIS_URL);
  const readiness = { ...input.readiness };
  if (redis) readiness.redis = async () => void (await redis.ping());
  const common = {
    readiness,
    beforeScrape: input.beforeScrape,
    metricsToken: config.METRICS_TOKEN,
    logger: logger.child({ module: 'http' }),
  };
  const servers: OpsServer[] = [];
  const close = async () => {
    for (const server of servers.splice(0)) {
      await server
        .close()
        .catch((error: unknown) => logger.warn({ err: error }, 'could not stop the ops server'));
    }
    if (redis) await closeRedisClient(redis);
  };
  try {
    const main =
      publicPort === undefined
        ? undefined
        : await startOpsServer({
            ...common,
            port: publicPort,
            host: config.HTTP_HOST,
            metrics: config.METRICS_PORT === undefined ? input.registry : false,
          });
    if (main) servers.push(main);
    const separate =
      config.METRICS_PORT === undefined
        ? undefined
        : await startOpsServer({
            ...common,
            port: config.METRICS_PORT,
            host: config.METRICS_HOST,
            metrics: input.registry,
          });
    if (separate) servers.push(separate);
    if (main || separate) logger.info({ url: main?.url, metricsUrl: separate?.url }, 'http server listening');
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
