/**
 * PROCESS_ROLE=rest-proxy: one Discord REST budget for the whole bot. Every other process of the bot sets
 * DISCORD_API_URL=http://<this host>:<port>/api, and this process sends their requests on through one
 * `@discordjs/rest` limiter, answering as `@discordjs/proxy` does (restProxyForward.ts), so Discord's
 * global limit and per-route buckets are kept once for all of them, and a 429 is waited out here
 * instead of being answered to a caller.
 *
 * Each caller's own Authorization header goes to Discord as it came: the proxy never adds its token. The
 * token only tells the bot's callers from another bot's: a request with a different `Bot` token is
 * answered 401 here, as Discord would answer it, without reaching Discord, whose invalid-request limit
 * (10,000 401s, 403s and 429s in 10 minutes bans the IP) counts against the address every caller shares.
 * Requests with no token (interaction callbacks and webhooks) and OAuth2 `Bearer` ones go through.
 * @see https://discord.com/developers/docs/topics/rate-limits
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DefaultRestOptions, REST, RESTEvents } from '@discordjs/rest';
import { DEFAULT_DISCORD_API_URL } from '../discord/oauth.ts';
import type { Logger } from '../ops/log.ts';
import type { RestProxyConfig } from './restProxyConfig.ts';
import { forwardToDiscord } from './restProxyForward.ts';
import { SlidingWindowPace } from './slidingWindowPace.ts';

/** Sent on every request the proxy makes; a request arriving with it has come round in a loop. */
const VIA = '1.1 web3bio-rest-proxy';
/** Discord's global limit: requests a second per bot token. */
const DISCORD_GLOBAL_LIMIT = 50;
/**
 * The window the proxy keeps those 50 in: a quarter longer than Discord's second (40 a second sustained),
 * so that up to 250 ms of difference between when the proxy sends and when Discord counts (a new
 * connection's handshake, a busy machine) never puts 51 in one of Discord's seconds.
 */
const GLOBAL_WINDOW_MS = 1_250;
/** A warning about refused tokens at most this often (a misconfigured caller would fill the log). */
const REFUSAL_LOG_INTERVAL_MS = 60_000;
/** Requests still in flight after this long at shutdown are cut. */
const DRAIN_DEADLINE_MS = 10_000;

/** What `GET /healthz` answers: counts since start. */
export interface RestProxyCounts {
  /** Requests sent on to Discord. */
  forwarded: number;
  /** Requests answered 401 here: a `Bot` token other than the proxy's own. */
  refusedTokens: number;
  /** 429s Discord answered, each waited out and retried here (each counts toward the invalid-request limit). */
  discord429s: number;
  /** Requests whose caller hung up first (its REST timed out): dropped, unsent if they still waited here. */
  abandoned: number;
}

export interface RestProxy {
  /** `http://host:port`: callers set DISCORD_API_URL to this plus `/api`. */
  readonly url: string;
  readonly counts: Readonly<RestProxyCounts>;
  /** Stops accepting, lets the requests in flight finish (10 s at most), then closes. */
  stop(): Promise<void>;
}

/** Starts the proxy on REST_PROXY_HOST:REST_PROXY_PORT; logs "rest proxy ready" once listening. */
export async function startRestProxy(config: RestProxyConfig, logger: Logger): Promise<RestProxy> {
  const counts: RestProxyCounts = { forwarded: 0, refusedTokens: 0, discord429s: 0, abandoned: 0 };
  const pace = new SlidingWindowPace(DISCORD_GLOBAL_LIMIT, GLOBAL_WINDOW_MS);
  const rest = new REST({
    api: config.DISCORD_API_URL ?? DEFAULT_DISCORD_API_URL,
    headers: { Via: VIA },
    // The global limit is kept at the moment of sending (below), not by @discordjs/rest's fixed windows;
    // a global 429 from Discord still stops every request until its Retry-After. Only the bot token's
    // requests count: interaction answers are not bound by it, and must not wait behind a role-edit storm
    // (an interaction not answered within 3 s fails).
    globalRequestsPerSecond: Number.POSITIVE_INFINITY,
    makeRequest: async (url, init) => {
      if (sentAsBot(init.headers)) await pace.take(init.signal ?? undefined);
      return DefaultRestOptions.makeRequest(url, init);
    },
  });
  rest.on(RESTEvents.Debug, (message) => {
    if (message.startsWith('Encountered unexpected 429')) counts.discord429s += 1;
  });
  keepOneQueuePerBucket(rest);
  const ownToken = digest(`Bot ${config.DISCORD_TOKEN}`);
  let lastRefusalLog = 0;
  let warnedLoop = false;
  let stopping = false;

  const server = createServer((req, res) => {
    // A caller's kept-alive connection is let go once its answer is sent, so the stop need not wait it out.
    if (stopping) res.setHeader('Connection', 'close');
    const refusal = refuse(req);
    if (refusal) {
      answer(res, refusal.status, refusal.body);
      return;
    }
    counts.forwarded += 1;
    forwardToDiscord(rest, req, res).then(
      (outcome) => {
        if (outcome === 'abandoned') counts.abandoned += 1;
      },
      (error: unknown) =>
        logger.error({ method: req.method, err: describe(error) }, 'rest proxy could not reach Discord'),
    );
  });

  /** The answer the proxy gives itself, or null to send the request on to Discord. */
  function refuse(req: IncomingMessage): { status: number; body: unknown } | null {
    const path = new URL(req.url ?? '/', 'http://proxy').pathname;
    if (path === '/healthz' && req.method === 'GET') return { status: 200, body: { ok: true, ...counts } };
    if (!path.startsWith('/api/')) return { status: 404, body: { message: '404: Not Found', code: 0 } };
    if (String(req.headers.via ?? '').includes(VIA)) {
      if (!warnedLoop) logger.error('rest proxy received its own request: DISCORD_API_URL points back at it');
      warnedLoop = true;
      return {
        status: 508,
        body: { message: 'DISCORD_API_URL of the rest proxy points at itself', code: 0 },
      };
    }
    const authorization = req.headers.authorization;
    if (authorization?.startsWith('Bot ') && !timingSafeEqual(digest(authorization), ownToken)) {
      counts.refusedTokens += 1;
      if (Date.now() - lastRefusalLog >= REFUSAL_LOG_INTERVAL_MS) {
        lastRefusalLog = Date.now();
        logger.warn(
          { refused: counts.refusedTokens },
          'rest proxy refused a request with another bot token (answered 401 without asking Discord)',
        );
      }
      return { status: 401, body: { message: '401: Unauthorized', code: 0 } };
    }
    return null;
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.REST_PROXY_PORT, config.REST_PROXY_HOST, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { address, port } = server.address() as AddressInfo;
  const host = address.includes(':') ? `[${address}]` : address;
  logger.info({ host: address, port, discord: new URL(rest.options.api).origin }, 'rest proxy ready');
  return {
    url: `http://${host}:${port}`,
    counts,
    async stop() {
      stopping = true;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      const idle = setInterval(() => server.closeIdleConnections(), 100);
      const cut = setTimeout(() => server.closeAllConnections(), DRAIN_DEADLINE_MS);
      await closed;
      clearInterval(idle);
      clearTimeout(cut);
      rest.clearHashSweeper();
      rest.clearHandlerSweeper();
    },
  };
}

/**
 * @discordjs/rest queues a route's first requests under a name of its own and, once Discord's answer names
 * the route's bucket (X-RateLimit-Bucket), queues later ones under that name: a second queue, which knows
 * nothing of the first's remaining count, while the first still sends what it holds. After a burst the two
 * both spend the bucket, and Discord answers 429s (two on a one-a-second bucket in the e2e test). Here a
 * bucket keeps the queue of the first route that met it; a route met later that shares it joins that queue.
 */
function keepOneQueuePerBucket(rest: REST): void {
  const firstQueue = new Map<string, string>();
  const set = rest.hashes.set.bind(rest.hashes);
  rest.hashes.set = (route, data) => {
    // `route` is `METHOD:/bucket/route`; its first queue was named `Global(METHOD:/bucket/route)`.
    const queue = firstQueue.get(data.value) ?? `Global(${route})`;
    firstQueue.set(data.value, queue);
    return set(route, { ...data, value: queue });
  };
}

/** Whether a request carries a bot token, and so counts toward the bot's global limit. */
function sentAsBot(headers: unknown): boolean {
  const authorization = new Headers(headers as ConstructorParameters<typeof Headers>[0]).get('authorization');
  return authorization?.startsWith('Bot ') === true;
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

function answer(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
}

/** An error's name, code and message for the log: never the request's URL, which may hold a webhook token. */
function describe(error: unknown): { name: string; code?: string; message: string } {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error) };
  const code = (error as { code?: unknown }).code;
  return {
    name: error.name,
    ...(typeof code === 'string' ? { code } : {}),
    message: error.message.replace(/https?:\/\/\S+/g, '<url>'),
  };
}
