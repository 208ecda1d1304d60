/**
 * INTERACTIONS=http end to end: the stand-in Discord POSTs signed interactions to web replicas (the real
 * Fastify app, the real router) and reads the answers from the response bodies and the webhook routes,
 * as Discord does. Played: Discord saving the endpoint, lookups, a deferral, a select, autocomplete, a
 * message menu; an outsider's forged, unsigned, stale, tampered and replayed deliveries; two replicas
 * behind one address.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type FakeDiscord,
  type FakeGuild,
  startFakeDiscord,
  type Tamper,
} from '../../fakes/discord/server.ts';
import { deleteKeys, REDIS_URL } from '../../fakes/localRedis.ts';
import { startRoundRobin } from '../../fakes/roundRobin.ts';
import { type FakeWeb3Bio, startFakeWeb3Bio } from '../../fakes/web3bio/server.ts';
import { closeRedisClient, createRedisClient, untilRedisReady } from '../../src/cache/redisStore.ts';
import { waitFor } from './gatingHarness.ts';
import { ALICE, callbackTypes, isEphemeral, toCommandOptions, visibleMessage } from './harness.ts';
import { type Replica, startReplica } from './replicaHarness.ts';

const whoisVitalik = { name: 'whois', options: toCommandOptions({ identity: 'vitalik.eth' }) };

describe('one web replica: no gateway, answers in the response body', () => {
  let discord: FakeDiscord;
  let upstream: FakeWeb3Bio;
  let guild: FakeGuild;
  let r: Replica;
  let saved: Awaited<ReturnType<FakeDiscord['saveInteractionsEndpoint']>>;

  beforeAll(async () => {
    discord = await startFakeDiscord();
    upstream = await startFakeWeb3Bio();
    guild = discord.addGuild({ name: 'HTTP Guild' });
    discord.addMember(guild.id, { id: ALICE, username: 'alice' });
    r = await startReplica(discord, upstream, { USER_COOLDOWN_COMMANDS: '100' });
    saved = await discord.saveInteractionsEndpoint(r.endpoint);
  });
  afterAll(async () => {
    await r.close();
    await Promise.all([discord.close(), upstream.close()]);
  });

  it('Discord saves the endpoint: its PING gets a PONG and its badly signed PING a 401', () => {
    expect(saved.saved).toBe(true);
    expect(saved.valid.status).toBe(200);
    expect(JSON.parse(saved.valid.body)).toEqual({ type: 1 });
    expect(saved.invalid.status).toBe(401);
  });

  it('/whois: the embed in the response body (type 4), with no gateway connection at all', async () => {
    const result = await discord.runCommand({ ...whoisVitalik, userId: ALICE });
    expect(callbackTypes(result)).toEqual([4]);
    expect(result.delivery?.status).toBe(200);
    const message = visibleMessage(result);
    expect(message.embeds[0]?.author?.name).toBe('ENS · vitalik.eth');
    expect(isEphemeral(message)).toBe(false);
    expect(discord.gatewayShards).toEqual([]);
    // Nothing used the bot token: every answer went through the response or the interaction webhook.
    expect(discord.requests.filter((q) => q.headers.authorization !== undefined)).toEqual([]);
  });

  it('a slow lookup is deferred in the body (type 5), then the webhook edits the answer in', async () => {
    upstream.setLatency(2_000);
    try {
      const result = await discord.runCommand({
        name: 'whois',
        userId: ALICE,
        options: toCommandOptions({ identity: 'tony.base.eth' }),
      });
      expect(callbackTypes(result)).toEqual([5]);
      expect(result.delivery?.ms).toBeLessThan(2_000);
      expect(visibleMessage(result).embeds[0]?.author?.name).toBe('Basenames · tony.base.eth');
    } finally {
      upstream.setLatency(0);
    }
  });

  it('a select on the answer updates the message in place (type 7)', async () => {
    const reply = visibleMessage(await discord.runCommand({ ...whoisVitalik, userId: ALICE }));
    const row = reply.components?.[0] as { components: unknown[] } | undefined;
    const select = row?.components[0] as { custom_id: string; options: { value: string }[] };
    const pick = select.options[1]?.value ?? '';
    const clicked = await discord.clickComponent({
      message: reply,
      customId: select.custom_id,
      values: [pick],
      userId: ALICE,
    });
    expect(callbackTypes(clicked)).toEqual([7]);
    expect(clicked.message?.id).toBe(reply.id);
    expect(clicked.message?.embeds[0]?.author?.name).not.toBe('ENS · vitalik.eth');
  });

  it('autocomplete answers type 8 from what is at hand, without asking Web3.bio', async () => {
    const before = upstream.requests.length;
    const result = await discord.typeInOption({
      name: 'avatar',
      focused: 'identity',
      value: 'vit',
      userId: ALICE,
    });
    expect(callbackTypes(result)).toEqual([8]);
    const choices = result.callbacks[0]?.data.choices as { value: string }[] | undefined;
    const names = (choices ?? []).map((c) => c.value);
    expect(names).toContain('vit.eth');
    expect(upstream.requests.length).toBe(before);
  });

  it('a message context menu reads the message from the interaction JSON', async () => {
    const result = await discord.runCommand({
      name: 'Web3 identities in this message',
      type: 'message',
      targetMessage: { content: 'ask vitalik.eth about it' },
      userId: ALICE,
    });
    expect(callbackTypes(result)).toEqual([4]);
    const message = visibleMessage(result);
    expect(isEphemeral(message)).toBe(true);
    expect(JSON.stringify(message.embeds)).toContain('vitalik.eth');
  });

  it('a gating command on a replica without gating says gating is off, privately', async () => {
    const result = await discord.runCommand({
      name: 'verify',
      userId: ALICE,
      options: toCommandOptions({ identity: 'alice.eth' }),
    });
    expect(isEphemeral(visibleMessage(result))).toBe(true);
  });

  it.each<Tamper>(['unsigned', 'forged', 'stale', 'future', 'tampered'])(
    'a %s delivery gets 401 and changes nothing: no answer, no lookup, no log of a command',
    async (tamper) => {
      const payload = discord.buildCommandInteraction({ ...whoisVitalik, userId: ALICE });
      const requests = discord.requests.length;
      const lookups = upstream.requests.length;
      const answer = await discord.deliverInteraction({ payload, tamper, url: r.endpoint });
      expect(answer.status).toBe(401);
      expect(answer.body).not.toMatch(/vitalik|embed/);
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(discord.requests.length).toBe(requests);
      expect(upstream.requests.length).toBe(lookups);
      expect(r.logs.some((l) => l.interactionId === payload.id)).toBe(false);
      expect(r.logs.some((l) => l.msg === 'interaction delivery refused')).toBe(true);
    },
  );

  it('a captured delivery replayed within the window gets 401: it acts once', async () => {
    const payload = discord.buildCommandInteraction({ ...whoisVitalik, userId: ALICE });
    const body = JSON.stringify(payload);
    const headers = { 'content-type': 'application/json', ...discord.webhookEvents.sign(body) };
    const first = await fetch(r.endpoint, { method: 'POST', headers, body });
    expect(first.status).toBe(200);
    expect((await first.json()).type).toBe(4);
    const again = await fetch(r.endpoint, { method: 'POST', headers, body });
    expect(again.status).toBe(401);
    await waitFor(() => r.logs.some((l) => l.interactionId === payload.id), 'the log line');
    expect(
      r.logs.filter((l) => l.interactionId === payload.id && l.msg === 'interaction answered'),
    ).toHaveLength(1);
  });

  it('answers carry an API’s security headers; the pages beside them keep a page’s', async () => {
    const body = JSON.stringify(discord.buildCommandInteraction({ ...whoisVitalik, userId: ALICE }));
    const headers = { 'content-type': 'application/json', ...discord.webhookEvents.sign(body) };
    const answer = await fetch(r.endpoint, { method: 'POST', headers, body });
    expect(answer.status).toBe(200);
    const page = await fetch(`${r.replica.url}/healthz`);
    const unknown = await fetch(`${r.replica.url}/no-such-page`);
    expect(unknown.status).toBe(404);
    for (const other of [page, unknown, await fetch(r.endpoint)]) {
      expect(other.headers.get('cross-origin-opener-policy')).toBe('same-origin');
      expect(other.headers.get('permissions-policy')).toContain('camera=()');
    }
    for (const name of [
      'cache-control',
      'content-security-policy',
      'strict-transport-security',
      'x-content-type-options',
      'x-frame-options',
    ]) {
      expect(answer.headers.get(name), name).toBeTruthy();
      expect(answer.headers.get(name), name).toBe(page.headers.get(name));
    }
    expect(answer.headers.get('x-content-type-options')).toBe('nosniff');
    expect(answer.headers.get('content-type')).toBe('application/json');
    // Page-only headers (what a browser rendering a document needs) are left out of the API's answers.
    for (const name of ['cross-origin-opener-policy', 'permissions-policy', 'x-dns-prefetch-control'])
      expect(answer.headers.has(name), name).toBe(false);
  });

  it('a body over the 512 KiB limit is refused unread (413), signed or not', async () => {
    const body = JSON.stringify({
      ...discord.buildCommandInteraction({ ...whoisVitalik, userId: ALICE }),
      pad: 'x'.repeat(1_100_000),
    });
    const headers = { 'content-type': 'application/json', ...discord.webhookEvents.sign(body) };
    const answer = await fetch(r.endpoint, { method: 'POST', headers, body });
    expect(answer.status).toBe(413);
  });

  it('a body that is not an interaction, though signed, gets 400', async () => {
    const answer = await discord.deliverInteraction({ payload: '{"hello":"world"}', url: r.endpoint });
    expect(answer.status).toBe(400);
  });
});

describe('two web replicas behind one address, sharing Redis (PROCESS_ROLE=web)', () => {
  let discord: FakeDiscord;
  let upstream: FakeWeb3Bio;
  const replicas: Replica[] = [];
  let lb: Awaited<ReturnType<typeof startRoundRobin>>;
  const prefix = `e2e-http-replicas-${randomUUID()}:`;

  beforeAll(async () => {
    discord = await startFakeDiscord();
    upstream = await startFakeWeb3Bio();
    const guild = discord.addGuild({ name: 'HTTP Guild' });
    discord.addMember(guild.id, { id: ALICE, username: 'alice' });
    const env = { PROCESS_ROLE: 'web', REDIS_URL, REDIS_PREFIX: prefix, USER_COOLDOWN_COMMANDS: '100' };
    replicas.push(await startReplica(discord, upstream, env), await startReplica(discord, upstream, env));
    lb = await startRoundRobin(replicas.map((x) => x.replica.url));
    discord.useInteractionsEndpoint(`${lb.url}/interactions`);
  });
  afterAll(async () => {
    await lb.close();
    for (const x of replicas) await x.close();
    await Promise.all([discord.close(), upstream.close()]);
    const redis = createRedisClient(REDIS_URL);
    await untilRedisReady(redis);
    await deleteKeys(redis, `${prefix}*`);
    await closeRedisClient(redis);
  });

  it('answer alternately, with the same results', async () => {
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await discord.runCommand({ ...whoisVitalik, userId: ALICE }));
    const [a, b] = replicas.map((x) => x.replica.url);
    expect(lb.served).toEqual([a, b, a, b]);
    const embeds = results.map((result) => JSON.stringify(visibleMessage(result).embeds));
    expect(new Set(embeds).size).toBe(1);
    for (const x of replicas) {
      expect(x.logs.filter((l) => l.msg === 'interaction answered' && l.command === 'whois')).toHaveLength(2);
    }
  });

  it('the same signed bytes sent to the other replica get 401 and change nothing: no lookup, no answer, no log of it', async () => {
    const result = await discord.runCommand({
      name: 'whois',
      userId: ALICE,
      options: toCommandOptions({ identity: 'tony.base.eth' }),
    });
    expect(callbackTypes(result)).toEqual([4]);
    const captured = result.delivery?.sent;
    if (!captured) throw new Error('the stand-in recorded no bytes');
    const servedBy = lb.served.at(-1);
    const other = replicas.find((x) => x.replica.url !== servedBy);
    if (!other) throw new Error('no other replica');
    const lookups = upstream.requests.length;
    const requests = discord.requests.length;
    const answered = () =>
      replicas.flatMap((x) => x.logs).filter((l) => l.interactionId === result.interactionId);
    await waitFor(() => answered().length > 0, 'the first answer logged');
    const before = answered().length;

    const replayed = await fetch(other.endpoint, { method: 'POST', ...captured });
    expect(replayed.status).toBe(401);
    expect(await replayed.text()).not.toMatch(/tony|embed/);
    // And to the replica that answered it, and to the load balancer again.
    for (const url of [`${servedBy}/interactions`, `${lb.url}/interactions`])
      expect((await fetch(url, { method: 'POST', ...captured })).status).toBe(401);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(upstream.requests.length).toBe(lookups);
    expect(discord.requests.length).toBe(requests);
    expect(answered()).toHaveLength(before);
    const refusals = other.logs.filter((l) => l.msg === 'interaction delivery refused');
    expect(refusals.at(-1)).toMatchObject({ refusal: 'replayed' });
  });
});

describe('a flood of forged deliveries from one client, through a trusted proxy', () => {
  let discord: FakeDiscord;
  let upstream: FakeWeb3Bio;
  let r: Replica;

  beforeAll(async () => {
    discord = await startFakeDiscord();
    upstream = await startFakeWeb3Bio();
    const guild = discord.addGuild({ name: 'HTTP Guild' });
    discord.addMember(guild.id, { id: ALICE, username: 'alice' });
    r = await startReplica(discord, upstream, { TRUST_PROXY: '127.0.0.1' });
    discord.useInteractionsEndpoint(r.endpoint);
  });
  afterAll(async () => {
    await r.close();
    await Promise.all([discord.close(), upstream.close()]);
  });

  it('turns the client away unchecked after 30 refusals, while Discord’s deliveries are answered', async () => {
    const forged = async () => {
      const body = JSON.stringify(discord.buildCommandInteraction({ ...whoisVitalik, userId: ALICE }));
      const headers = {
        'content-type': 'application/json',
        'x-forwarded-for': '203.0.113.9',
        'x-signature-ed25519': 'ab'.repeat(64),
        'x-signature-timestamp': String(Math.floor(Date.now() / 1_000)),
      };
      return (await fetch(r.endpoint, { method: 'POST', headers, body })).status;
    };
    const flood = Promise.all(Array.from({ length: 200 }, forged));
    const started = performance.now();
    const legit = await discord.runCommand({ ...whoisVitalik, userId: ALICE });
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(callbackTypes(legit)).toEqual([4]);
    const statuses = await flood;
    // Checked before, counted after: deliveries already past the check when the 30th is counted finish.
    const refused = statuses.filter((s) => s === 401).length;
    expect(refused).toBeGreaterThanOrEqual(30);
    expect(refused).toBeLessThanOrEqual(40);
    expect(statuses.filter((s) => s === 429)).toHaveLength(200 - refused);
    expect(r.logs.filter((l) => l.msg === 'interaction delivery refused')).toHaveLength(refused);
    // Discord's next delivery (another client) is still checked and answered.
    expect(callbackTypes(await discord.runCommand({ ...whoisVitalik, userId: ALICE }))).toEqual([4]);
  });
});
