/**
 * The operator's routes: `GET /healthz` (the process is alive: open to anyone, it says "ok" and nothing
 * else), `GET /readyz` (gateway ready, store and Redis reachable) and `GET /metrics` (Prometheus).
 * The last two say how the bot is built and how it is doing, so they are never open to the world:
 * with METRICS_TOKEN they need `Authorization: Bearer <token>`; without it they are served only on the
 * METRICS_PORT listener, which must then be bound to loopback (config.ts refuses anything else).
 */
import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Registry } from 'prom-client';
import { refuseOtherMethods, sendText } from './responses.ts';

/** What `/metrics` serves: a prom-client registry, or anything that writes the same text (the shard manager's sum). */
export type MetricsSource = Pick<Registry, 'metrics' | 'contentType'>;

/** One readiness check: resolves when the dependency answers; rejects or times out when it does not. */
export type ReadinessCheck = () => Promise<void> | void;

export interface OpsRoutesOptions {
  /** Serve `/metrics` here (false: it is served on another listener). */
  metrics: MetricsSource | false;
  /** Runs before each scrape to refresh gauges read on demand (gateway ping, queue depth). */
  beforeScrape?: () => Promise<void>;
  /** When set, `/readyz` and `/metrics` answer 401 without `Authorization: Bearer <token>`. */
  metricsToken?: string | undefined;
  /**
   * Without a token: whether this listener may serve `/readyz` and `/metrics` openly (the loopback
   * METRICS_PORT listener). When false and no token is set, they are not served here at all.
   */
  openWithoutToken: boolean;
  /** Named checks for `/readyz`; all must pass. */
  readiness: Record<string, ReadinessCheck>;
  logger?: { warn(obj: object, msg?: string): void };
}

/** A readiness check that has not answered in this long counts as failed. */
const CHECK_TIMEOUT_MS = 2_000;

export function registerOpsRoutes(app: FastifyInstance, o: OpsRoutesOptions): void {
  app.get('/healthz', (_request, reply) => sendText(reply, 200, 'ok'));
  refuseOtherMethods(app, '/healthz', 'GET, HEAD');
  if (o.metricsToken === undefined && !o.openWithoutToken) return;
  app.get('/readyz', async (request, reply) => {
    if (!authorized(request, reply, o.metricsToken)) return reply;
    const failed = await failedChecks(o.readiness);
    return failed.length === 0
      ? sendText(reply, 200, 'ready\n')
      : sendText(reply, 503, `not ready: ${failed.join(', ')}\n`);
  });
  const metrics = o.metrics;
  if (metrics === false) return;
  app.get('/metrics', async (request, reply) => {
    if (!authorized(request, reply, o.metricsToken)) return reply;
    await o
      .beforeScrape?.()
      .catch((error: unknown) => o.logger?.warn({ err: error }, 'refreshing gauges failed'));
    const text = await metrics.metrics();
    return reply.code(200).type(metrics.contentType).send(text);
  });
}

/** True when no token is set or the request carries it; otherwise answers 401 and returns false. */
function authorized(request: FastifyRequest, reply: FastifyReply, token: string | undefined): boolean {
  if (token === undefined) return true;
  const given = Buffer.from(request.headers.authorization ?? '');
  const wanted = Buffer.from(`Bearer ${token}`);
  if (given.length === wanted.length && timingSafeEqual(given, wanted)) return true;
  sendText(reply.header('www-authenticate', 'Bearer'), 401, 'unauthorized\n');
  return false;
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
