/**
 * The server process of the web benchmark (bench/web.ts): one in-memory SQLite store holding one open
 * challenge, served by the bot's Fastify app (`startWebServer` with its real defaults, the per-client
 * limit raised out of reach) and by a bare `node:http` server doing the same work per request, both on
 * 127.0.0.1. The load comes from the parent, so the two do not share an event loop with it.
 *
 * IPC: sends `{ type: 'ready', servers }` once both listen; answers `{ type: 'cpu' }` with this
 * process's CPU time; `{ type: 'stop' }` closes both and exits.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import { request } from 'undici';
import type { SiweConfig } from '../src/gating/proofs/challengeMessage.ts';
import { createChallenge } from '../src/gating/proofs/siwe.ts';
import { openSqliteStore } from '../src/store/sqliteStore.ts';
import type { GatingStore } from '../src/store/types.ts';
import { listenHttp } from '../src/web/listen.ts';
import { renderVerifyPage } from '../src/web/pages/verifyPage.ts';
import { DEFAULT_CONNECTIONS, startWebServer } from '../src/web/server.ts';
import { openChallenge } from '../src/web/signing/challengeRoutes.ts';
import { baselineHeaders, cspTemplate } from './web.ts';

export interface BenchServers {
  fastifyUrl: string;
  baselineUrl: string;
  /** The open challenge both serve: GET `/verify/<nonce>`. */
  nonce: string;
  /** The header set the baseline writes besides content-length and the per-response CSP. */
  baselineHeaderNames: string[];
}

export type ServersMessage =
  | { type: 'ready'; servers: BenchServers }
  | { type: 'cpu'; userMicros: number; systemMicros: number };

/** The same limits the benchmark states in its method line. */
export const REQUESTS_PER_CLIENT_PER_MINUTE = 1e9;

const SIWE: SiweConfig = { publicUrl: 'https://bot.example.org' };

async function start(): Promise<{ servers: BenchServers; close: () => Promise<void> }> {
  const store = await openSqliteStore(':memory:');
  const fastify = await startWebServer({
    port: 0,
    host: '127.0.0.1',
    store,
    siwe: SIWE,
    onVerified: async () => ({ ok: true }),
    limits: { requestsPerClientPerMinute: REQUESTS_PER_CLIENT_PER_MINUTE },
  });
  const { nonce } = await createChallenge(store, SIWE, {
    guildId: '111111111111111111',
    userId: '222222222222222222',
    userName: 'alice',
    guildName: 'Web3 Lounge',
    identity: 'vitalik.eth',
    address: `0x${'5a'.repeat(20)}`,
  });
  // The headers the Fastify app sends with the page, reused by the baseline.
  const sample = await request(`${fastify.url}/verify/${nonce}`);
  await sample.body.dump();
  if (sample.statusCode !== 200) throw new Error(`Fastify answered ${sample.statusCode} to the signing page`);
  const headers = baselineHeaders(sample.headers);
  const csp = cspTemplate(String(sample.headers['content-security-policy'] ?? ''));
  const baseline = await startBaseline(store, headers, csp);
  return {
    servers: {
      fastifyUrl: fastify.url,
      baselineUrl: baseline.url,
      nonce,
      baselineHeaderNames: Object.keys(headers),
    },
    close: async () => {
      await baseline.close();
      await fastify.close();
      await store.close();
    },
  };
}

const VERIFY_PREFIX = '/verify/';

/**
 * The signing page on bare `node:http`, with the connection settings `startWebServer` uses: the
 * challenge read from the same store (`openChallenge`, the check the Fastify route makes:
 * `store.getNonce` plus used/expired), the page rendered with a fresh CSP nonce, the Fastify app's
 * headers. Anything else is a bare 404.
 */
async function startBaseline(
  store: GatingStore,
  headers: Readonly<Record<string, string>>,
  csp: (cspNonce: string) => string,
): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer({
    headersTimeout: DEFAULT_CONNECTIONS.headersTimeoutMs,
    requestTimeout: DEFAULT_CONNECTIONS.requestTimeoutMs,
    keepAliveTimeout: DEFAULT_CONNECTIONS.keepAliveTimeoutMs,
    connectionsCheckingInterval: 1_000,
  });
  const answer = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = (req.url ?? '').split('?', 1)[0] ?? '';
    const nonce = path.startsWith(VERIFY_PREFIX) ? path.slice(VERIFY_PREFIX.length) : '';
    const challenge =
      req.method === 'GET' && nonce !== '' && !nonce.includes('/')
        ? await openChallenge({ store, siwe: SIWE, linkedRoles: false }, nonce)
        : undefined;
    if (!challenge || !('record' in challenge)) {
      res.writeHead(404, { ...headers, 'content-type': 'text/plain; charset=utf-8' }).end('Not found.');
      return;
    }
    const cspNonce = randomBytes(16).toString('base64');
    const body = renderVerifyPage({ kind: 'ready', record: challenge.record }, cspNonce);
    const out: OutgoingHttpHeaders = {
      ...headers,
      'content-security-policy': csp(cspNonce),
      'content-length': Buffer.byteLength(body),
    };
    res.writeHead(200, out).end(body);
  };
  server.on('request', (req, res) => {
    answer(req, res).catch(() => {
      if (!res.headersSent) res.writeHead(500);
      res.end();
    });
  });
  const { url } = await listenHttp(server, 0, '127.0.0.1');
  return {
    url,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}

if (import.meta.main) {
  const { servers, close } = await start();
  process.on('message', (message: { type: string }) => {
    if (message.type === 'cpu') {
      const usage = process.cpuUsage();
      process.send?.({
        type: 'cpu',
        userMicros: usage.user,
        systemMicros: usage.system,
      } satisfies ServersMessage);
    } else if (message.type === 'stop') {
      void close().finally(() => process.exit(0));
    }
  });
  // The parent went away without a stop: do not linger.
  process.on('disconnect', () => void close().finally(() => process.exit(0)));
  process.send?.({ type: 'ready', servers } satisfies ServersMessage);
}
