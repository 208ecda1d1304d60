/**
 * Refuse before reading (issue #26), acted out over raw sockets against a real web replica: deliveries
 * that are unsigned, stale or too large are answered before a byte of their body is sent; slow uploads
 * past the bytes-in-flight cap, the client's share of it or the process's, are refused with 503 and cost
 * nothing once gone; a body that does not come in time is refused (408) and counted toward the client's
 * lock-out (issue #33); behind a hop-count
 * TRUST_PROXY, one forwarded client holding too many requests open is refused while another client
 * through the same proxy is served; and the largest interaction Discord sends this bot still fits.
 */
import type { APIMessage, APIUser } from 'discord-api-types/v10';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { FakeDiscord } from '../../fakes/discord/server.ts';
import type { FakeWeb3Bio } from '../../fakes/web3bio/server.ts';
import { DEFAULT_BYTES_PER_CLIENT, MAX_BYTES_IN_FLIGHT } from '../../src/web/deliveryGate.ts';
import { MAX_INTERACTION_BODY_BYTES } from '../../src/web/interactions.ts';
import { startWebServer, type WebServer } from '../../src/web/server.ts';
import { WEBHOOK_EVENTS_PATH } from '../../src/web/webhookEvents.ts';
import { ALICE, toCommandOptions } from './harness.ts';
import { postHead, RawRequest, shapedSignature } from './rawRequests.ts';
import { type Replica, startReplica, startStandIns } from './replicaHarness.ts';

const ONE_MB = 1_000_000;
const whois = { name: 'whois', options: toCommandOptions({ identity: 'vitalik.eth' }) };

let discord: FakeDiscord;
let upstream: FakeWeb3Bio;
const opened: RawRequest[] = [];

beforeAll(async () => {
  ({ discord, upstream } = await startStandIns());
});
afterAll(async () => {
  await Promise.all([discord.close(), upstream.close()]);
});
afterEach(() => {
  for (const request of opened.splice(0)) request.close();
});

function open(port: number, head: string, localAddress?: string): RawRequest {
  const request = new RawRequest(port, head, localAddress);
  opened.push(request);
  return request;
}

const portOf = (r: Replica) => Number(new URL(r.replica.url).port);

describe('refused before the body is read', () => {
  let r: Replica;
  beforeAll(async () => {
    r = await startReplica(discord, upstream);
  });
  afterAll(async () => {
    await r.close();
  });

  it.each([
    ['without signature headers', 401, {}],
    ['stamped 10 minutes ago', 401, shapedSignature(600)],
    ['stamped 10 minutes ahead', 401, shapedSignature(-600)],
    ['with a malformed signature', 401, { ...shapedSignature(), 'X-Signature-Ed25519': 'not-hex' }],
    ['well-formed and fresh, but over the body limit', 413, shapedSignature()],
  ] as const)(
    'a POST %s announcing a 1 MB body gets %i with no body byte sent, and its connection closed',
    async (_what, status, headers) => {
      const request = open(portOf(r), postHead(ONE_MB, headers));
      const answer = await request.answerWithin(2_000);
      expect(answer?.status).toBe(status);
      expect(answer?.text).toMatch(/\r\nconnection: close\r\n/i);
      // The server ends the connection itself: it will not wait for the megabyte.
      expect((await request.answer).closed).toBe(true);
    },
  );

  it('a well-formed, fresh delivery within the limit is read: nothing is answered until its body arrives', async () => {
    // The control: the refusals above come from the headers, not from a server that answers before reading.
    const request = open(portOf(r), postHead(1_000, shapedSignature()));
    expect(await request.answerWithin(500)).toBeNull();
    request.socket.write('x'.repeat(1_000));
    // The body is not Discord's signature over it: refused once read.
    expect((await request.answerWithin(2_000))?.status).toBe(401);
  });

  it('the refusals are logged and counted as refused deliveries', () => {
    const refusals = r.logs.filter((l) => l.msg === 'interaction delivery refused').map((l) => l.refusal);
    expect(refusals).toEqual(expect.arrayContaining(['missing', 'stale', 'bad_signature']));
  });
});

describe('webhook events: the same checks before the body', () => {
  let server: WebServer;
  beforeAll(async () => {
    server = await startWebServer({
      port: 0,
      host: '127.0.0.1',
      linkedRoles: {
        oauth: {
          clientId: '100000000000000001',
          clientSecret: 'secret',
          apiUrl: 'http://127.0.0.1:9',
          publicUrl: 'https://bot.example.test',
          publicKey: discord.webhookEvents.publicKey,
        },
        key: Buffer.alloc(32, 7),
        evaluator: { readRecord: async () => ({ profiles: [], domain: null, failed: true }) },
        service: {} as never,
      },
    });
  });
  afterAll(async () => {
    await server.close();
  });

  it.each([
    ['without signature headers', 401, {}],
    ['stamped 10 minutes ago', 401, shapedSignature(600)],
    ['well-formed and fresh, but over the 64 KiB event limit', 413, shapedSignature()],
  ] as const)(
    'an event POSTed %s announcing a 1 MB body gets %i with no body byte sent',
    async (_what, status, headers) => {
      const head = postHead(ONE_MB, headers).replace('POST /interactions', `POST ${WEBHOOK_EVENTS_PATH}`);
      const request = open(server.port, head);
      expect((await request.answerWithin(2_000))?.status).toBe(status);
      expect((await request.answer).closed).toBe(true);
    },
  );
});

describe('bytes in flight', () => {
  let r: Replica;
  beforeAll(async () => {
    // A body timeout longer than the tests' holds: here the uploads hold what they sent until closed.
    r = await startReplica(discord, upstream, {
      USER_COOLDOWN_COMMANDS: '100',
      DELIVERY_BODY_TIMEOUT_MS: '15000',
    });
  });
  afterAll(async () => {
    await r.close();
  });

  /** `count` uploads from `addresses` (round robin), each sending all but the last byte of a full body. */
  const fullBodies = (count: number, addresses: readonly string[]) =>
    Array.from({ length: count }, (_, i) => {
      const request = open(
        portOf(r),
        postHead(MAX_INTERACTION_BODY_BYTES, shapedSignature()),
        addresses[i % addresses.length],
      );
      request.socket.write(Buffer.alloc(MAX_INTERACTION_BODY_BYTES - 1, 0x20));
      return request;
    });
  const settle = () => new Promise((resolve) => setTimeout(resolve, 500));

  it('slow uploads from many clients fill the cap with what they sent; past it a delivery gets 503 with Retry-After; once they are gone, Discord is answered again', async () => {
    const perClient = Math.floor(DEFAULT_BYTES_PER_CLIENT / MAX_INTERACTION_BODY_BYTES);
    const clients = Math.ceil(MAX_BYTES_IN_FLIGHT / DEFAULT_BYTES_PER_CLIENT);
    // Each client up to its share, so together they hold the whole process budget (each under the per-address connection cap).
    const slow = fullBodies(
      perClient * clients,
      Array.from({ length: clients }, (_, i) => `127.0.0.${10 + i}`),
    );
    await settle();
    expect(slow.filter((request) => request.answered)).toEqual([]);

    const past = open(portOf(r), postHead(1_000, shapedSignature()), '127.0.0.30');
    const refused = await past.answerWithin(2_000);
    expect(refused?.status).toBe(503);
    expect(refused?.text).toMatch(/\r\nretry-after: 1\r\n/i);
    // Discord's own delivery meanwhile is refused too (the cap is the process's), then answered once they go.
    const payload = discord.buildCommandInteraction({ ...whois, userId: ALICE });
    expect((await discord.deliverInteraction({ payload, url: r.endpoint })).status).toBe(503);
    for (const request of slow) request.close();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const again = discord.buildCommandInteraction({ ...whois, userId: ALICE });
    expect((await discord.deliverInteraction({ payload: again, url: r.endpoint })).status).toBe(200);
  });

  it('one client holds at most its share: its uploads past it get 503 unread, while Discord is answered', async () => {
    const perClient = Math.floor(DEFAULT_BYTES_PER_CLIENT / MAX_INTERACTION_BODY_BYTES);
    const slow = fullBodies(32, ['127.0.0.40']);
    await settle();
    const answered = await Promise.all(slow.map((request) => request.answerWithin(2_000)));
    const statuses = answered.map((answer) => answer?.status ?? 'held');
    expect(statuses.filter((status) => status === 'held')).toHaveLength(perClient);
    expect(statuses.filter((status) => status === 503)).toHaveLength(32 - perClient);
    const busy = answered.find((answer) => answer?.status === 503);
    expect(busy?.text).toMatch(/\r\nretry-after: 1\r\n/i);
    expect(busy?.text).toMatch(/\r\nconnection: close\r\n/i);
    // The control: another client's delivery, Discord's, is read and answered while that client holds its share.
    const payload = discord.buildCommandInteraction({ ...whois, userId: ALICE });
    expect((await discord.deliverInteraction({ payload, url: r.endpoint })).status).toBe(200);
    // Its share is free again once its uploads end.
    for (const request of slow) request.close();
    await new Promise((resolve) => setTimeout(resolve, 200));
    const next = fullBodies(perClient, ['127.0.0.40']);
    expect(await next[0]?.answerWithin(500)).toBeNull();
  });

  it('an upload without a length (chunked) holds what it sent, not the body limit: past its client’s share it gets 503, past the limit 413', async () => {
    const chunkedHead = (headers: Record<string, string>) =>
      postHead(0, { ...headers, 'Transfer-Encoding': 'chunked' }).replace('Content-Length: 0\r\n', '');
    const slots = Math.floor(MAX_BYTES_IN_FLIGHT / MAX_INTERACTION_BODY_BYTES);
    // As many as would have filled the cap when each held the body limit (issue #26's reservation).
    const slow = Array.from({ length: slots + 8 }, (_, i) =>
      open(portOf(r), chunkedHead(shapedSignature()), `127.0.1.${10 + (i % 8)}`),
    );
    for (const request of slow) request.socket.write('6\r\n{"id":\r\n');
    await settle();
    expect(slow.filter((request) => request.answered)).toEqual([]);
    const payload = discord.buildCommandInteraction({ ...whois, userId: ALICE });
    expect((await discord.deliverInteraction({ payload, url: r.endpoint })).status).toBe(200);

    // Without a length, a client's share fills as the bytes come: past it, 503.
    const chunk = MAX_INTERACTION_BODY_BYTES / 2;
    const part = `${chunk.toString(16)}\r\n${' '.repeat(chunk)}\r\n`;
    const perClient = DEFAULT_BYTES_PER_CLIENT / chunk;
    const filling = Array.from({ length: perClient + 1 }, () =>
      open(portOf(r), chunkedHead(shapedSignature()), '127.0.1.20'),
    );
    for (const request of filling.slice(0, perClient)) request.socket.write(part);
    await settle();
    expect(filling.filter((request) => request.answered)).toEqual([]);
    filling.at(-1)?.socket.write(part);
    expect((await filling.at(-1)?.answerWithin(2_000))?.status).toBe(503);

    const large = open(portOf(r), chunkedHead(shapedSignature()), '127.0.1.30');
    for (let i = 0; i < 3; i++) large.socket.write(part);
    const answer = await large.answerWithin(2_000);
    expect(answer?.status).toBe(413);
    expect(answer?.text).toMatch(/\r\nconnection: close\r\n/i);
    for (const request of slow) request.close();
  });

  it('the largest interaction Discord sends this bot fits: a message context menu on a message at its limits', async () => {
    const payload = discord.buildCommandInteraction({
      name: 'Web3 identities in this message',
      type: 'message',
      targetMessage: { content: 'ask vitalik.eth' },
      userId: ALICE,
    }) as { data: { resolved: { messages: Record<string, APIMessage> } } };
    const [id, target] = Object.entries(payload.data.resolved.messages)[0] ?? [];
    if (!id || !target) throw new Error('no target message');
    const replyTo = largestMessage(target, 'the message it replies to');
    payload.data.resolved.messages[id] = {
      ...largestMessage(target, 'ask vitalik.eth'),
      referenced_message: replyTo,
    };
    const bytes = Buffer.byteLength(JSON.stringify(payload));
    // What MAX_INTERACTION_BODY_BYTES's comment says about it: about 245 KiB, half the limit.
    expect(bytes).toBeGreaterThan(240 * 1024);
    expect(bytes).toBeLessThan(MAX_INTERACTION_BODY_BYTES / 2);
    const answer = await discord.deliverInteraction({ payload, url: r.endpoint });
    expect(answer.status).toBe(200);
    expect(answer.body).toContain('vitalik.eth');
  });
});

describe('a body that does not come in time (issue #33)', () => {
  let r: Replica;
  const timeoutMs = 1_000;
  beforeAll(async () => {
    r = await startReplica(discord, upstream, {
      USER_COOLDOWN_COMMANDS: '100',
      DELIVERY_BODY_TIMEOUT_MS: String(timeoutMs),
    });
  });
  afterAll(async () => {
    await r.close();
  });

  it('is refused with 408 once the timeout passes, its connection closed, and logged as a refused delivery', async () => {
    const stalled = open(portOf(r), postHead(MAX_INTERACTION_BODY_BYTES, shapedSignature()), '127.0.2.1');
    stalled.socket.write('{"id":');
    expect(await stalled.answerWithin(timeoutMs - 300)).toBeNull();
    const answer = await stalled.answerWithin(2_000);
    expect(answer?.status).toBe(408);
    expect(answer?.text).toMatch(/\r\nconnection: close\r\n/i);
    expect((await stalled.answer).closed).toBe(true);
    expect(r.logs).toContainEqual(
      expect.objectContaining({
        msg: 'interaction delivery refused',
        refusal: 'body_timeout',
        client: '127.0.2.1',
      }),
    );
  });

  it('counts toward the lock-out: past 30 in a minute the client is turned away before any check; another client is not', async () => {
    // 30 refusals a minute are allowed; the 31st and later requests are turned away unchecked.
    const stalled = Array.from({ length: 30 }, () =>
      open(portOf(r), postHead(1_000, shapedSignature()), '127.0.2.2'),
    );
    const answers = await Promise.all(stalled.map((request) => request.answerWithin(timeoutMs + 2_000)));
    expect(answers.map((answer) => answer?.status)).toEqual(Array(30).fill(408));
    const next = open(portOf(r), postHead(1_000, shapedSignature()), '127.0.2.2');
    const refused = await next.answerWithin(1_000);
    expect(refused?.status).toBe(429);
    expect(refused?.text).toMatch(/\r\nretry-after: \d+\r\n/i);
    // The control: Discord, another client, is answered.
    const payload = discord.buildCommandInteraction({ ...whois, userId: ALICE });
    expect((await discord.deliverInteraction({ payload, url: r.endpoint })).status).toBe(200);
  });

  it('the control: a signed body that arrives in parts within the timeout is read and answered', async () => {
    const body = JSON.stringify(discord.buildCommandInteraction({ ...whois, userId: ALICE }));
    const head = postHead(Buffer.byteLength(body), discord.webhookEvents.sign(body));
    const request = open(portOf(r), head, '127.0.2.3');
    const half = Math.floor(body.length / 2);
    request.socket.write(body.slice(0, half));
    await new Promise((resolve) => setTimeout(resolve, timeoutMs / 2));
    request.socket.write(body.slice(half));
    const answer = await request.answerWithin(3_000);
    expect(answer?.status).toBe(200);
    expect(answer?.text).toContain('vitalik.eth');
  });
});

describe('behind a hop-count TRUST_PROXY', () => {
  let r: Replica;
  beforeAll(async () => {
    r = await startReplica(discord, upstream, { TRUST_PROXY: '1', USER_COOLDOWN_COMMANDS: '100' });
  });
  afterAll(async () => {
    await r.close();
  });

  it('one forwarded client past its open-request cap is refused on every route; another client through the same proxy is served', async () => {
    // Every request arrives from the proxy's one address; X-Forwarded-For names the client.
    const greedy = { 'X-Forwarded-For': '203.0.113.7' };
    const held = Array.from({ length: 64 }, () =>
      open(portOf(r), postHead(1_000, { ...shapedSignature(), ...greedy })),
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(held.filter((request) => request.answered)).toEqual([]);

    const extra = open(portOf(r), postHead(1_000, { ...shapedSignature(), ...greedy }));
    const refused = await extra.answerWithin(2_000);
    expect(refused?.status).toBe(429);
    expect(refused?.text).toMatch(/\r\nretry-after: 1\r\n/i);
    const page = await fetch(`${r.replica.url}/healthz`, { headers: greedy });
    expect(page.status).toBe(429);

    const other = { 'x-forwarded-for': '203.0.113.8' };
    expect((await fetch(`${r.replica.url}/healthz`, { headers: other })).status).toBe(200);
    const body = JSON.stringify(discord.buildCommandInteraction({ ...whois, userId: ALICE }));
    const signed = { 'content-type': 'application/json', ...discord.webhookEvents.sign(body), ...other };
    const served = await fetch(r.endpoint, { method: 'POST', headers: signed, body });
    expect(served.status).toBe(200);

    // Once the greedy client's requests end, it is served again.
    for (const request of held) request.close();
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect((await fetch(`${r.replica.url}/healthz`, { headers: greedy })).status).toBe(200);
  });
});

/** A user as a message's author or mention carries it. */
function userOf(n: number): APIUser {
  return {
    id: String(310_000_000_000_000_000n + BigInt(n)),
    username: `member_${n}_with_a_long_name`,
    global_name: 'Ü'.repeat(32),
    discriminator: '0',
    avatar: `a_${'f'.repeat(32)}`,
    public_flags: 64,
    flags: 64,
    banner: null,
    accent_color: null,
    avatar_decoration_data: { asset: `a_${'f'.repeat(32)}`, sku_id: '1144058844004233369', expires_at: null },
  } as APIUser;
}

/**
 * A message at Discord's limits: 4,000 characters of content (3 bytes each in UTF-8), 100 mentioned users,
 * 10 embeds (6,000 characters of text among them, each with its URLs and Discord's proxy URLs, URLs of
 * 200 characters), 10 attachments with descriptions of 1,024 characters, and a poll of 10 answers.
 */
function largestMessage(base: APIMessage, lead: string): APIMessage {
  const url = (n: number) => `https://media.example.org/${String(n).padStart(4, '0')}/${'p'.repeat(170)}`;
  const proxy = (u: string) =>
    `https://images-ext-1.discordapp.net/external/${'h'.repeat(43)}/${encodeURIComponent(u)}`;
  const embeds = Array.from({ length: 10 }, (_, i) => {
    const u = url(i);
    return {
      type: 'rich',
      title: 'T'.repeat(100),
      description: '€'.repeat(400),
      url: u,
      color: 0x5865f2,
      timestamp: '2026-01-01T00:00:00.000Z',
      fields: Array.from({ length: 5 }, () => ({
        name: 'n'.repeat(10),
        value: 'v'.repeat(10),
        inline: true,
      })),
      author: { name: 'a'.repeat(20), url: u, icon_url: u, proxy_icon_url: proxy(u) },
      footer: { text: 'f'.repeat(30), icon_url: u, proxy_icon_url: proxy(u) },
      image: { url: u, proxy_url: proxy(u), width: 1_000, height: 1_000 },
      thumbnail: { url: u, proxy_url: proxy(u), width: 100, height: 100 },
      video: { url: u, proxy_url: proxy(u), width: 100, height: 100 },
      provider: { name: 'p'.repeat(30), url: u },
    };
  });
  const cdn = (i: number) =>
    `https://cdn.discordapp.com/attachments/1234567890123456789/12345678901234567${String(i).padStart(2, '0')}/${'file_name_'.repeat(5)}.png?ex=${'a'.repeat(8)}&is=${'b'.repeat(8)}&hm=${'c'.repeat(64)}&`;
  const attachments = Array.from({ length: 10 }, (_, i) => ({
    id: String(1_234_567_890_123_456_700n + BigInt(i)),
    filename: `${'file_name_'.repeat(5)}.png`,
    size: 1_000_000,
    url: cdn(i),
    proxy_url: cdn(i).replace('cdn.discordapp.com', 'media.discordapp.net'),
    width: 1_000,
    height: 1_000,
    content_type: 'image/png',
    description: 'd'.repeat(1_024),
  }));
  return {
    ...base,
    content: `${lead} ${'€'.repeat(4_000 - lead.length - 1)}`,
    mentions: Array.from({ length: 100 }, (_, i) => userOf(i)),
    mention_roles: Array.from({ length: 50 }, (_, i) => String(1_200_000_000_000_000_000n + BigInt(i))),
    embeds,
    attachments,
    poll: {
      question: { text: 'q'.repeat(300) },
      answers: Array.from({ length: 10 }, (_, i) => ({
        answer_id: i + 1,
        poll_media: { text: 'a'.repeat(55), emoji: { id: null, name: '🔥' } },
      })),
      expiry: '2026-01-02T00:00:00.000Z',
      allow_multiselect: false,
      layout_type: 1,
      results: { answer_counts: [], is_finalized: false },
    },
  } as unknown as APIMessage;
}
