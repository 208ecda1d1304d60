/**
 * Where the web app listens, and what a connection may cost: headers within 10 s, a whole request
 * within 15 s, idle keep-alive connections closed after 5 s, at most 4,096 connections open, and at
 * most 64 from one address (an IPv6 one by its /64, as the rate limits count it). A proxy named in
 * TRUST_PROXY (every peer, behind a hop count) is exempt: its clients are told apart by X-Forwarded-For,
 * and the app counts each one's open requests against the same 64 instead (app.ts).
 */
import type { Server } from 'node:http';
import { BlockList, type Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { buildWebApp, type WebAppOptions } from './app.ts';
import { addressKey } from './limits.ts';
import { listenHttp } from './listen.ts';

// Not `import { createServer } from 'node:http'`: importing node:http as an ES module reads all its
// exports, its WebSocket getters included, which load Node's own copy of undici (about 3 MiB of heap in
// every process, unused here). The CommonJS module object reads nothing it is not asked for.
const { createServer } = process.getBuiltinModule('node:http');

export interface ConnectionSettings {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  maxConnections: number;
  maxConnectionsPerClient: number;
}

export const DEFAULT_CONNECTIONS: ConnectionSettings = {
  headersTimeoutMs: 10_000,
  requestTimeoutMs: 15_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 4_096,
  maxConnectionsPerClient: 64,
};

export interface WebServerOptions extends WebAppOptions {
  port: number;
  /** Default: all interfaces (the page is public, usually behind a TLS reverse proxy). */
  host?: string;
  connections?: Partial<ConnectionSettings>;
}

export interface WebServer {
  /** Where the server listens (not the public URL). */
  url: string;
  port: number;
  app: FastifyInstance;
  close(): Promise<void>;
}

/** Builds the app and listens; resolves once it does. */
export async function startWebServer(options: WebServerOptions): Promise<WebServer> {
  const settings = { ...DEFAULT_CONNECTIONS, ...options.connections };
  const server = createServer({
    headersTimeout: settings.headersTimeoutMs,
    requestTimeout: settings.requestTimeoutMs,
    keepAliveTimeout: settings.keepAliveTimeoutMs,
    // How often the timeouts above are enforced (Node's default, 30 s, would let a silent connection live ~40 s).
    connectionsCheckingInterval: 1_000,
  });
  server.maxConnections = settings.maxConnections;
  capPerClient(server, settings.maxConnectionsPerClient, exemptPeers(options.trustProxy));
  const app = await buildWebApp({
    ...options,
    openRequestsPerClient: settings.maxConnectionsPerClient,
    serverFactory: (handler) => server.on('request', handler),
  });
  await app.ready();
  try {
    const { url, port } = await listenHttp(server, options.port, options.host ?? '0.0.0.0');
    options.logger?.info({ port }, 'web server listening');
    return {
      url,
      port,
      app,
      // The server was listened on here, not by Fastify: it is closed here too.
      close: async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeAllConnections();
        await closed;
        await app.close();
      },
    };
  } catch (error) {
    await app.close();
    throw error;
  }
}

/**
 * Closes a new connection at once when its client already holds `max` (proxies in `exempt` aside): an
 * address, IPv6 by its /64 as the rate limits count it (`addressKey`), so one host cannot open `max` from
 * each of its addresses.
 */
export function capPerClient(server: Server, max: number, exempt: (address: string) => boolean): void {
  const open = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const peer = socket.remoteAddress ?? '';
    if (exempt(peer)) return;
    const address = addressKey(peer);
    const count = (open.get(address) ?? 0) + 1;
    if (count > max) {
      socket.destroy();
      return;
    }
    open.set(address, count);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left <= 0) open.delete(address);
      else open.set(address, left);
    });
  });
}

/** The peers exempt from the per-address cap: TRUST_PROXY's listed proxies, or every peer behind a hop count. */
function exemptPeers(trustProxy: WebAppOptions['trustProxy']): (address: string) => boolean {
  if (trustProxy === undefined) return () => false;
  if (typeof trustProxy === 'number') return () => true;
  const exact = new Set(trustProxy.filter((entry) => !entry.includes('/')).map(bareAddress));
  const ranges = trustProxy.filter((entry) => entry.includes('/'));
  if (ranges.length === 0) return (address) => exact.has(bareAddress(address));
  const block = new BlockList();
  for (const range of ranges) {
    const [network = '', bits = ''] = range.split('/');
    block.addSubnet(network, Number(bits), network.includes(':') ? 'ipv6' : 'ipv4');
  }
  return (address) => {
    const bare = bareAddress(address);
    return exact.has(bare) || block.check(bare, bare.includes(':') ? 'ipv6' : 'ipv4');
  };
}

/** `::ffff:127.0.0.1` as `127.0.0.1`, as Fastify's proxy-addr sees it. */
function bareAddress(address: string): string {
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}
