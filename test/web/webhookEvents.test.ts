/**
 * Discord's Webhook Events at PUBLIC_URL/discord/events: the signature check on its own, then the
 * receiver over real HTTP, played by Discord (a PING, a deauthorization, a repeated delivery) and by an
 * outsider (forged, tampered, replayed, unsigned and hostile bodies).
 */
import { ed25519 } from '@noble/curves/ed25519';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { postEvent, signedHeaders } from '../../fakes/discord/webhookEvents.ts';
import { BytesInFlight, DEFAULT_BODY_TIMEOUT_MS } from '../../src/web/deliveryGate.ts';
import { checkDiscordSignature, MAX_SIGNATURE_AGE_MS } from '../../src/web/discordSignature.ts';
import { SeenDeliveries } from '../../src/web/seenDeliveries.ts';
import { WEBHOOK_EVENTS_PATH, WebhookEventReceiver } from '../../src/web/webhookEvents.ts';

const APP_ID = '111111111111111111';
const ALICE = '222222222222222222';
const DISCORD_KEY = ed25519.utils.randomPrivateKey();
const PUBLIC_KEY = Buffer.from(ed25519.getPublicKey(DISCORD_KEY)).toString('hex');
const ATTACKER_KEY = ed25519.utils.randomPrivateKey();
const NOW_S = 1_760_000_000;

function deauthorization(userId = ALICE, extra: object = {}): string {
  return JSON.stringify({
    version: 1,
    application_id: APP_ID,
    type: 1,
    event: {
      type: 'APPLICATION_DEAUTHORIZED',
      timestamp: '2025-10-09T08:53:20.000000',
      data: { user: { id: userId, username: 'alice' } },
    },
    ...extra,
  });
}

describe('checkDiscordSignature', () => {
  const check = (
    body: string,
    headers: Partial<Record<'x-signature-ed25519' | 'x-signature-timestamp', string>>,
    nowS = NOW_S,
  ) =>
    checkDiscordSignature({
      publicKey: PUBLIC_KEY,
      signature: headers['x-signature-ed25519'],
      timestamp: headers['x-signature-timestamp'],
      body: Buffer.from(body),
      now: nowS * 1_000,
    });

  it("accepts Discord's signature over timestamp + body", () => {
    const body = deauthorization();
    expect(check(body, signedHeaders(DISCORD_KEY, body, NOW_S))).toBe('ok');
    const ping = '{"version":1,"application_id":"111111111111111111","type":0}';
    expect(check(ping, signedHeaders(DISCORD_KEY, ping, NOW_S - 299))).toBe('ok');
  });

  it('refuses a tampered body, a moved timestamp and another key', () => {
    const body = deauthorization();
    const headers = signedHeaders(DISCORD_KEY, body, NOW_S);
    expect(check(deauthorization('333333333333333333'), headers)).toBe('bad_signature');
    expect(check(`${body} `, headers)).toBe('bad_signature');
    expect(check(body, { ...headers, 'x-signature-timestamp': String(NOW_S - 1) })).toBe('bad_signature');
    expect(check(body, signedHeaders(ATTACKER_KEY, body, NOW_S))).toBe('bad_signature');
  });

  it('refuses a signature made more than 5 minutes away from now (a replay), either way', () => {
    const body = deauthorization();
    const maxAgeS = MAX_SIGNATURE_AGE_MS / 1_000;
    expect(check(body, signedHeaders(DISCORD_KEY, body, NOW_S - maxAgeS - 1))).toBe('stale');
    expect(check(body, signedHeaders(DISCORD_KEY, body, NOW_S + maxAgeS + 1))).toBe('stale');
    expect(check(body, signedHeaders(DISCORD_KEY, body, NOW_S - maxAgeS))).toBe('ok');
  });

  it('refuses missing or malformed headers', () => {
    const body = deauthorization();
    const headers = signedHeaders(DISCORD_KEY, body, NOW_S);
    expect(check(body, {})).toBe('missing');
    expect(check(body, { 'x-signature-ed25519': headers['x-signature-ed25519'] })).toBe('missing');
    expect(check(body, { 'x-signature-timestamp': headers['x-signature-timestamp'] })).toBe('missing');
    for (const signature of [
      'zz'.repeat(64),
      headers['x-signature-ed25519'].slice(2),
      `0x${'ab'.repeat(63)}`,
    ])
      expect(check(body, { ...headers, 'x-signature-ed25519': signature })).toBe('bad_signature');
    for (const timestamp of [`${NOW_S}.5`, '-1', `${NOW_S}abc`, '1'.repeat(40)])
      expect(check(body, { ...headers, 'x-signature-timestamp': timestamp })).not.toBe('ok');
  });
});

describe('the Webhook Events endpoint', () => {
  let app: FastifyInstance;
  let url: string;
  let forgotten: { userId: string; at: number }[];
  let logs: string[];
  let clock: { t: number };
  let failForget: boolean;
  /** How many more times the ledger cannot judge (the shared set being restored after Redis came back empty). */
  let unjudged: number;

  beforeEach(async () => {
    forgotten = [];
    logs = [];
    failForget = false;
    unjudged = 0;
    const seen = new SeenDeliveries();
    clock = { t: NOW_S * 1_000 };
    const capture = (obj: object, msg?: string) => logs.push(JSON.stringify({ ...obj, msg }));
    const receiver = new WebhookEventReceiver({
      publicKey: PUBLIC_KEY,
      applicationId: APP_ID,
      service: {
        forgetDeauthorized: async (userId, at) => {
          if (failForget) throw new Error('database is down');
          forgotten.push({ userId, at });
          return true;
        },
      },
      logger: { info: capture, warn: capture, error: capture },
      now: () => clock.t,
      guards: {
        refusals: { wait: async () => undefined, count: async () => {} },
        ledger: {
          firstSighting: (key, second, now) =>
            unjudged-- > 0 ? Promise.resolve('unjudged' as const) : seen.firstSighting(key, second, now),
        },
        budget: new BytesInFlight(),
        bodyTimeoutMs: DEFAULT_BODY_TIMEOUT_MS,
      },
    });
    app = Fastify();
    // The endpoint alone; its per-client cap is acted out in test/e2e/webHardening.test.ts.
    receiver.register(app, async () => {});
    url = `${await app.listen({ port: 0, host: '127.0.0.1' })}${WEBHOOK_EVENTS_PATH}`;
  });

  afterEach(async () => {
    await app.close();
  });

  const sendSigned = (body: string, key = DISCORD_KEY, atS = NOW_S) =>
    postEvent(url, body, signedHeaders(key, body, atS));
  const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

  it('answers PING with an empty 204', async () => {
    const answer = await sendSigned(JSON.stringify({ version: 1, application_id: APP_ID, type: 0 }));
    expect(answer).toEqual({ status: 204, body: '' });
    expect(forgotten).toEqual([]);
  });

  it('acknowledges a deauthorization with 204 and forgets that member as of the event time, once', async () => {
    const body = deauthorization();
    expect(await sendSigned(body)).toEqual({ status: 204, body: '' });
    await settle();
    expect(forgotten).toEqual([{ userId: ALICE, at: Date.parse('2025-10-09T08:53:20Z') }]);
    // The same delivery again (a retry, or a replay inside the 5 minutes) is acknowledged and does nothing.
    expect((await sendSigned(body)).status).toBe(204);
    await settle();
    expect(forgotten).toHaveLength(1);
  });

  it('an event that cannot be judged at first, while the replicas restore the shared set, is asked about again and acted on once', async () => {
    unjudged = 2;
    const body = deauthorization();
    expect((await sendSigned(body)).status).toBe(204);
    await settle();
    expect(forgotten).toEqual([{ userId: ALICE, at: Date.parse('2025-10-09T08:53:20Z') }]);
    expect((await sendSigned(body)).status).toBe(204);
    await settle();
    expect(forgotten).toHaveLength(1);
    expect(logs.filter((l) => l.includes('webhook event already acted on'))).toHaveLength(1);
  });

  it('refuses an event signed with another key (a forgery) with 401 and forgets no one', async () => {
    const answer = await sendSigned(deauthorization(), ATTACKER_KEY);
    expect(answer.status).toBe(401);
    const stale = await sendSigned(deauthorization(), DISCORD_KEY, NOW_S - 301);
    expect(stale.status).toBe(401);
    const unsigned = await postEvent(url, deauthorization(), {});
    expect(unsigned.status).toBe(401);
    const genuine = deauthorization();
    const headers = signedHeaders(DISCORD_KEY, genuine, NOW_S);
    const retargeted = await postEvent(url, deauthorization('333333333333333333'), headers);
    expect(retargeted.status).toBe(401);
    await settle();
    expect(forgotten).toEqual([]);
    expect(logs.filter((l) => l.includes('webhook event refused'))).toHaveLength(4);
    for (const line of logs) {
      expect(line).not.toContain(PUBLIC_KEY);
      expect(line).not.toContain(headers['x-signature-ed25519']);
    }
  });

  it('acknowledges other event types and other applications without acting', async () => {
    const authorized = JSON.stringify({
      version: 1,
      application_id: APP_ID,
      type: 1,
      event: {
        type: 'APPLICATION_AUTHORIZED',
        timestamp: '2025-10-09T08:53:20',
        data: { user: { id: ALICE } },
      },
    });
    const unknown = JSON.stringify({
      version: 1,
      application_id: APP_ID,
      type: 1,
      event: { type: 'SOMETHING_NEW', data: null },
    });
    const elsewhere = deauthorization(ALICE, { application_id: '999999999999999999' });
    for (const body of [authorized, unknown, elsewhere]) expect((await sendSigned(body)).status).toBe(204);
    await settle();
    expect(forgotten).toEqual([]);
  });

  it('survives hostile bodies: never a crash, never a removal, the server keeps answering', async () => {
    const hostile = [
      '',
      'not json',
      'null',
      '[]',
      '{"type":1}',
      JSON.stringify({ application_id: APP_ID, type: 7, event: null }),
      JSON.stringify({ application_id: APP_ID, type: 1, event: { type: 'APPLICATION_DEAUTHORIZED' } }),
      JSON.stringify({
        application_id: APP_ID,
        type: 1,
        event: { type: 'APPLICATION_DEAUTHORIZED', data: { user: { id: '1 OR 1=1' } } },
      }),
      JSON.stringify({
        application_id: APP_ID,
        type: 1,
        event: { type: 'APPLICATION_DEAUTHORIZED', data: { user: { id: 222 } } },
      }),
      `{"__proto__":{"polluted":1},"application_id":"${APP_ID}","type":1}`,
      '{"a":'.repeat(5_000),
      `${'['.repeat(30_000)}${']'.repeat(30_000)}`,
    ];
    for (const body of hostile) {
      const answer = await sendSigned(body);
      expect([204, 400]).toContain(answer.status);
    }
    await settle();
    expect(forgotten).toEqual([]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((await sendSigned(JSON.stringify({ application_id: APP_ID, type: 0 }))).status).toBe(204);
  });

  it('refuses a body over 64 KiB (413) and any method but POST (405)', async () => {
    const huge = deauthorization(ALICE, { padding: 'x'.repeat(70_000) });
    expect((await sendSigned(huge)).status).toBe(413);
    const get = await fetch(url);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    expect(forgotten).toEqual([]);
  });

  it('logs a failed removal without the error crashing anything, after acknowledging', async () => {
    failForget = true;
    expect((await sendSigned(deauthorization())).status).toBe(204);
    await settle();
    expect(logs.some((l) => l.includes('removing the connection failed'))).toBe(true);
    expect((await sendSigned(JSON.stringify({ application_id: APP_ID, type: 0 }))).status).toBe(204);
  });
});
