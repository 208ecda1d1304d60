/**
 * The web tier under attack, acted out over real sockets against the real app (src/web/server.ts):
 * clients behind a reverse proxy told apart by TRUST_PROXY, forged X-Forwarded-For ignored without it,
 * per-client caps on every public route and on webhook events, limits shared through the real Redis,
 * and silent connections that neither starve a page nor live on. Each test fails when its setting is
 * reverted (named in the test).
 */
import { randomUUID } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { Agent, fetch as undiciFetch } from 'undici';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { deleteKeys, REDIS_URL } from '../../fakes/localRedis.ts';
import { closeRedisClient, createRedisClient, untilRedisReady } from '../../src/cache/redisStore.ts';
import { buildSiweMessage, type SiweConfig } from '../../src/gating/proofs/challengeMessage.ts';
import { createChallenge } from '../../src/gating/proofs/siwe.ts';
import { openSqliteStore } from '../../src/store/sqliteStore.ts';
import type { GatingStore } from '../../src/store/types.ts';
import { startWebServer, type WebServer, type WebServerOptions } from '../../src/web/server.ts';

const GUILD = '111111111111111111';
const USER = '222222222222222222';
const member = privateKeyToAccount(generatePrivateKey());
const stranger = privateKeyToAccount(generatePrivateKey());
const siwe: SiweConfig = { publicUrl: 'https://bot.example.org' };

let store: GatingStore;
const servers: WebServer[] = [];
const cleanups: (() => Promise<unknown>)[] = [];

beforeEach(async () => {
  store = await openSqliteStore(':memory:');
});
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  for (const cleanup of cleanups.splice(0)) await cleanup();
  await store.close();
});

async function serve(options: Partial<WebServerOptions> = {}): Promise<WebServer> {
  const server = await startWebServer({
    port: 0,
    host: '127.0.0.1',
    store,
    siwe,
    onVerified: async () => ({ ok: true }),
    ...options,
  });
  servers.push(server);
  return server;
}

async function challenge(userId = USER) {
  const created = await createChallenge(store, siwe, {
    guildId: GUILD,
    userId,
    userName: 'alice',
    guildName: 'Web3 Lounge',
    identity: 'alice.eth',
    address: member.address,
  });
  const record = await store.getNonce(created.nonce);
  if (!record) throw new Error('not stored');
  return { nonce: created.nonce, message: buildSiweMessage(siwe, record) };
}

/** POSTs a signature for `nonce` as the client `forwardedFor` (sent in X-Forwarded-For when given). */
async function postSignature(
  server: WebServer,
  nonce: string,
  signature: string,
  forwardedFor?: string,
): Promise<Response> {
  return fetch(`${server.url}/verify/${nonce}`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      ...(forwardedFor ? { 'x-forwarded-for': forwardedFor } : {}),
    },
    body: JSON.stringify({ signature }),
  });
}

/** Ten refused signatures from `client` (each on its own challenge, so none is burned). */
async function refuseTen(server: WebServer, client: string | (() => string)): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < 10; i += 1) {
    const { nonce, message } = await challenge(`3${String(i).padStart(17, '0')}`);
    const forged = await stranger.signMessage({ message });
    const res = await postSignature(server, nonce, forged, typeof client === 'string' ? client : client());
    await res.arrayBuffer();
    statuses.push(res.status);
  }
  return statuses;
}

const LIMITS = { refusedSignaturesPerClient: 10 };

describe('behind a reverse proxy', () => {
  it('TRUST_PROXY set: one client’s refused signatures lock out that client only, not every member', async () => {
    // Reverting TRUST_PROXY (the proxy's address unset) keys every client on the proxy: Bob gets 429.
    const server = await serve({ trustProxy: ['127.0.0.1'], limits: LIMITS });
    expect(await refuseTen(server, '203.0.113.7')).toEqual(Array(10).fill(422));
    const { nonce, message } = await challenge();
    const attacker = await postSignature(server, nonce, await member.signMessage({ message }), '203.0.113.7');
    expect(attacker.status).toBe(429);
    expect(attacker.headers.get('retry-after')).toMatch(/^\d+$/);
    await expect(attacker.json()).resolves.toMatchObject({ reason: 'too_many_attempts' });
    const bob = await postSignature(server, nonce, await member.signMessage({ message }), '198.51.100.9');
    expect(bob.status).toBe(200);
  });

  it('a hop count trusts only the address the proxy appended: a forged leftmost entry changes nothing', async () => {
    // With TRUST_PROXY=1 the client is the last X-Forwarded-For entry; rotating a forged first entry does not help.
    const server = await serve({ trustProxy: 1, limits: LIMITS });
    await refuseTen(server, () => `10.9.${Math.floor(Math.random() * 250)}.1, 203.0.113.7`);
    const { nonce, message } = await challenge();
    const again = await postSignature(
      server,
      nonce,
      await member.signMessage({ message }),
      '192.0.2.55, 203.0.113.7',
    );
    expect(again.status).toBe(429);
    const other = await postSignature(server, nonce, await member.signMessage({ message }), '198.51.100.9');
    expect(other.status).toBe(200);
  });

  it('TRUST_PROXY unset: X-Forwarded-For is ignored, so a client cannot dodge its limit by forging it', async () => {
    // Trusting the header by default (trustProxy: true) would give each forged address a fresh limit.
    const server = await serve({ limits: LIMITS });
    let seq = 0;
    await refuseTen(server, () => {
      seq += 1;
      return `198.18.0.${seq}`;
    });
    const { nonce, message } = await challenge();
    const res = await postSignature(server, nonce, await member.signMessage({ message }), '198.18.1.1');
    expect(res.status).toBe(429);
  });
});

describe('per-client caps on every public route', () => {
  it('webhook events: a flood of deliveries from one client gets 429 with the wait; another client still gets through', async () => {
    // Reverting the events limit (limits.events) lets every delivery through to the signature check (401).
    const server = await serve({
      trustProxy: ['127.0.0.1'],
      limits: { eventsPerClientPerMinute: 5 },
      linkedRoles: {
        oauth: {
          clientId: '100000000000000001',
          clientSecret: 'secret',
          apiUrl: 'http://127.0.0.1:9',
          publicUrl: siwe.publicUrl,
          publicKey: 'ab'.repeat(32),
        },
        key: Buffer.alloc(32, 7),
        evaluator: { readRecord: async () => ({ profiles: [], domain: null, failed: true }) },
        service: {} as never,
      },
    });
    const deliver = (client: string) =>
      fetch(`${server.url}/discord/events`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': client },
        body: '{}',
      });
    const statuses: number[] = [];
    for (let i = 0; i < 7; i += 1) statuses.push((await deliver('203.0.113.7')).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429]);
    const limited = await deliver('203.0.113.7');
    expect(limited.headers.get('retry-after')).toMatch(/^\d+$/);
    await expect(limited.json()).resolves.toMatchObject({
      ok: false,
      message: expect.stringMatching(/^Slow down/),
    });
    expect((await deliver('198.51.100.9')).status).toBe(401);
  });

  it('pages, unknown paths and health: one client is capped per minute; another is not', async () => {
    // Reverting the plugin's global limit (requestsPerClientPerMinute) serves all 12.
    const server = await serve({ trustProxy: ['127.0.0.1'], limits: { requestsPerClientPerMinute: 8 } });
    const { nonce } = await challenge();
    const paths = [`/verify/${nonce}`, `/verify/${nonce}/message`, '/healthz', '/no/such/page'];
    const statuses: number[] = [];
    for (let i = 0; i < 12; i += 1) {
      const res = await fetch(`${server.url}${paths[i % paths.length]}`, {
        headers: { 'x-forwarded-for': '203.0.113.7' },
      });
      await res.arrayBuffer();
      statuses.push(res.status);
    }
    expect(statuses.slice(0, 8)).toEqual([200, 200, 200, 404, 200, 200, 200, 404]);
    expect(statuses.slice(8)).toEqual([429, 429, 429, 429]);
    const other = await fetch(`${server.url}/verify/${nonce}`, {
      headers: { 'x-forwarded-for': '198.51.100.9' },
    });
    expect(other.status).toBe(200);
  });
});

describe('limits on Redis', () => {
  it('hold across processes: refusals counted by one server turn the client away at another', async () => {
    // Without the Redis store each process counts alone, and the second server lets the client in.
    const prefix = `web3bio-test:${randomUUID()}:`;
    const clients = [createRedisClient(REDIS_URL), createRedisClient(REDIS_URL)];
    cleanups.push(async () => {
      await deleteKeys(clients[0] as never, `${prefix}*`);
      await Promise.all(clients.map((c) => closeRedisClient(c)));
    });
    await Promise.all(clients.map((client) => untilRedisReady(client)));
    const [a, b] = await Promise.all(
      clients.map((client) =>
        serve({ redis: { client, prefix }, trustProxy: ['127.0.0.1'], limits: LIMITS }),
      ),
    );
    if (!a || !b) throw new Error('servers did not start');
    expect(await refuseTen(a, '203.0.113.7')).toEqual(Array(10).fill(422));
    const { nonce, message } = await challenge();
    const res = await postSignature(b, nonce, await member.signMessage({ message }), '203.0.113.7');
    expect(res.status).toBe(429);
    const keys = await clients[0]?.keys(`${prefix}rate:*`);
    expect(keys?.length).toBeGreaterThan(0);
  });
});

describe('connections', () => {
  /** Opens `count` TCP connections from `localAddress` that never send a byte; resolves once all are open or refused. */
  async function silentConnections(
    server: WebServer,
    count: number,
    localAddress: string,
  ): Promise<Socket[]> {
    const sockets: Socket[] = [];
    await Promise.all(
      Array.from(
        { length: count },
        () =>
          new Promise<void>((resolve) => {
            const socket = connect({ host: '127.0.0.1', port: server.port, localAddress });
            socket.on('error', () => resolve());
            socket.on('connect', () => resolve());
            // Read whatever the server says (a 408 before it closes), so its close is seen.
            socket.resume();
            sockets.push(socket);
          }),
      ),
    );
    cleanups.push(async () => {
      for (const socket of sockets) socket.destroy();
    });
    return sockets;
  }

  it('2,000 silent connections from one address: a page still answers at once, the extra ones are closed at once, and the rest within the headers timeout', async () => {
    // Reverting the per-address cap keeps all 2,000 open; reverting headersTimeout (Node's 60 s) keeps them past 30 s.
    const server = await serve();
    const { nonce } = await challenge();
    const sockets = await silentConnections(server, 2_000, '127.0.0.2');
    const closed = () => sockets.filter((s) => s.destroyed || s.closed).length;
    // The cap closes all but 64 at once.
    await expect.poll(closed, { timeout: 5_000, interval: 50 }).toBeGreaterThanOrEqual(2_000 - 64);

    const page = new Agent({ connect: { localAddress: '127.0.0.1' } });
    cleanups.push(() => page.close());
    const started = performance.now();
    const res = await undiciFetch(`${server.url}/verify/${nonce}`, {
      dispatcher: page,
      signal: AbortSignal.timeout(2_000),
    });
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('<html');
    expect(performance.now() - started).toBeLessThan(2_000);

    // Headers must arrive within 10 s: the 64 silent ones that were let in are closed soon after.
    await expect.poll(closed, { timeout: 30_000, interval: 250 }).toBe(2_000);
  }, 45_000);

  it('an idle keep-alive connection is closed after a few seconds', async () => {
    // Reverting keepAliveTimeout to Fastify's 72 s keeps it open past the 8 s waited here.
    const server = await serve();
    const socket = connect({ host: '127.0.0.1', port: server.port });
    cleanups.push(async () => socket.destroy());
    const answered = new Promise<string>((resolve) => socket.once('data', (chunk) => resolve(String(chunk))));
    socket.write('GET /healthz HTTP/1.1\r\nHost: bot.example.org\r\nConnection: keep-alive\r\n\r\n');
    expect(await answered).toMatch(/^HTTP\/1\.1 200/);
    const openedAt = performance.now();
    await new Promise<void>((resolve) => socket.once('close', () => resolve()));
    expect(performance.now() - openedAt).toBeLessThan(8_000);
  }, 15_000);
});
