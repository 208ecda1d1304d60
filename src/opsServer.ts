/**
 * The operator's HTTP surface: `GET /healthz` (the process is alive), `GET /readyz` (gateway ready,
 * store and Redis reachable) and `GET /metrics` (Prometheus), optionally behind a bearer token. Any
 * other path goes to `fallback` (the gating verification server, proxied) or gets a 404, so the signing
 * page and the health checks share one public port.
 */
import { timingSafeEqual } from 'node:crypto';
import { Agent, createServer, type IncomingMessage, request, type ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';
import { listenHttp } from './httpListen.ts';

/** One readiness check: resolves when the dependency answers; rejects or times out when it does not. */
export type ReadinessCheck = () => Promise<void> | void;

export interface OpsServerOptions {
  port: number;
  host: string;
  /** Serve `/metrics` here (false: it is served on another listener, e.g. one bound to METRICS_HOST). */
  metrics: Registry | false;
  /** Runs before each scrape to refresh gauges read on demand (gateway ping, queue depth). */
  beforeScrape?: () => Promise<void>;
  /** When set, `/metrics` answers 401 without `Authorization: Bearer <token>`. */
  metricsToken?: string | undefined;
  /** Named checks for `/readyz`; all must pass. */
  readiness: Record<string, ReadinessCheck>;
  /** Where other paths go, e.g. the verification server's internal address `http://127.0.0.1:PORT`. */
  fallback?: string | undefined;
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
  const fallback = options.fallback === undefined ? undefined : new URL(options.fallback);
  const agent = new Agent({ keepAlive: true });
  const server = createServer((req, res) => {
    route(req, res, options, fallback, agent).catch((error: unknown) => {
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
        agent.destroy();
      }),
  };
}

async function route(
  req: IncomingMessage,
  res: ServerResponse,
  options: OpsServerOptions,
  fallback: URL | undefined,
  agent: Agent,
): Promise<void> {
  const path = pathOf(req);
  const readOnly = req.method === 'GET' || req.method === 'HEAD';
  if (path === '/healthz' && readOnly) return send(res, 200, 'ok');
  if (path === '/readyz' && readOnly) {
    const failed = await failedChecks(options.readiness);
    const body = failed.length === 0 ? 'ready\n' : `not ready: ${failed.join(', ')}\n`;
    return send(res, failed.length === 0 ? 200 : 503, body);
  }
  if (path === '/metrics' && readOnly && options.metrics !== false) {
    if (!authorized(req, options.metricsToken)) {
      res.setHeader('www-authenticate', 'Bearer');
      return send(res, 401, 'unauthorized\n');
    }
    await options.beforeScrape?.().catch(() => undefined);
    const text = await options.metrics.metrics();
    res.writeHead(200, { 'content-type': options.metrics.contentType, 'cache-control': 'no-store' });
    res.end(text);
    return;
  }
  if (fallback !== undefined) return proxy(req, res, fallback, agent);
  send(res, 404, 'not found\n');
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

/** Passes the request to the server at `target` unchanged and streams its answer back. */
function proxy(req: IncomingMessage, res: ServerResponse, target: URL, agent: Agent): void {
  const forward = request(
    {
      agent,
      host: target.hostname,
      port: target.port,
      method: req.method,
      path: req.url,
      headers: req.headers,
    },
    (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    },
  );
  forward.on('error', () => {
    if (!res.headersSent) send(res, 502, 'bad gateway\n');
    else res.destroy();
  });
  req.pipe(forward);
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
