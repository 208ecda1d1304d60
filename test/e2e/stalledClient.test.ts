/**
 * Issue #33, acted out next to its honest control: one address stalls 32 uploads to /interactions for
 * 20 s (half send only the headers of a 512 KiB POST with a signature of the right shape and a fresh
 * timestamp, half all but the last byte of the body), reconnecting as each is closed, while the stand-in
 * Discord, from another address, keeps delivering signed interactions. Before, the stalled uploads
 * reserved the whole bytes-in-flight budget uncounted and every delivery of Discord's got 503 (69 of 69
 * over 35 s); now the client holds at most its share (the rest refused at once), its late bodies count
 * as refusals toward its lock-out, and Discord's deliveries keep getting 200 within Discord's 3 s.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { FakeDiscord } from '../../fakes/discord/server.ts';
import type { FakeWeb3Bio } from '../../fakes/web3bio/server.ts';
import { MAX_INTERACTION_BODY_BYTES } from '../../src/web/interactions.ts';
import { ALICE, toCommandOptions } from './harness.ts';
import { postHead, RawRequest, shapedSignature } from './rawRequests.ts';
import { type Replica, startReplica, startStandIns } from './replicaHarness.ts';

const ATTACK_MS = 20_000;
const UPLOADS = 32;
/** The attacker's own loopback address; Discord's deliveries come from 127.0.0.1. */
const ATTACKER = '127.0.0.2';
const DELIVERY_EVERY_MS = 250;
/** Discord's deadline for an interaction's answer. */
const ANSWER_WITHIN_MS = 3_000;

let discord: FakeDiscord;
let upstream: FakeWeb3Bio;
let r: Replica;

beforeAll(async () => {
  ({ discord, upstream } = await startStandIns());
  r = await startReplica(discord, upstream, { USER_COOLDOWN_COMMANDS: '1000' });
});
afterAll(async () => {
  await r?.close();
  await Promise.all([discord?.close(), upstream?.close()]);
});

/** One of the attacker's uploads, opened again each time the server closes it, until `until`; the statuses it got. */
async function stallAgainAndAgain(port: number, withBody: boolean, until: number): Promise<number[]> {
  const statuses: number[] = [];
  while (performance.now() < until) {
    const request = new RawRequest(port, postHead(MAX_INTERACTION_BODY_BYTES, shapedSignature()), ATTACKER);
    if (withBody) request.socket.write(Buffer.alloc(MAX_INTERACTION_BODY_BYTES - 1, 0x20));
    const left = until - performance.now();
    const answer = await Promise.race([
      request.answer,
      new Promise<null>((resolve) => setTimeout(() => resolve(null), Math.max(0, left))),
    ]);
    request.close();
    if (answer !== null) statuses.push(answer.status);
    // It reconnects at once, as the client did when Node's request timeout closed it.
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return statuses;
}

/** Discord's signed deliveries, one every DELIVERY_EVERY_MS until `until`: each one's status and time to answer. */
async function deliverMeanwhile(until: number): Promise<{ status: number; ms: number }[]> {
  const sent: Promise<{ status: number; ms: number }>[] = [];
  while (performance.now() < until) {
    const payload = discord.buildCommandInteraction({
      name: 'whois',
      options: toCommandOptions({ identity: 'vitalik.eth' }),
      userId: ALICE,
    });
    const started = performance.now();
    sent.push(
      discord
        .deliverInteraction({ payload, url: r.endpoint })
        .then((answer) => ({ status: answer.status, ms: performance.now() - started }))
        .catch(() => ({ status: 0, ms: performance.now() - started })),
    );
    await new Promise((resolve) => setTimeout(resolve, DELIVERY_EVERY_MS));
  }
  return Promise.all(sent);
}

it(
  `one address stalling ${UPLOADS} uploads for ${ATTACK_MS / 1_000} s: Discord's signed deliveries keep getting 200 within 3 s`,
  async () => {
    const port = Number(new URL(r.replica.url).port);
    // The control first: Discord is answered before the attack (and the lookup is cached from here on).
    const before = discord.buildCommandInteraction({
      name: 'whois',
      options: toCommandOptions({ identity: 'vitalik.eth' }),
      userId: ALICE,
    });
    expect((await discord.deliverInteraction({ payload: before, url: r.endpoint })).status).toBe(200);

    const until = performance.now() + ATTACK_MS;
    const [attacker, deliveries] = await Promise.all([
      Promise.all(Array.from({ length: UPLOADS }, (_, i) => stallAgainAndAgain(port, i % 2 === 1, until))),
      deliverMeanwhile(until),
    ]);

    const answered = deliveries.filter((d) => d.status === 200 && d.ms <= ANSWER_WITHIN_MS);
    expect(deliveries.length).toBeGreaterThanOrEqual(ATTACK_MS / DELIVERY_EVERY_MS / 2);
    expect(answered.length / deliveries.length).toBeGreaterThanOrEqual(0.95);
    expect(deliveries.filter((d) => d.status === 503)).toEqual([]);

    // The attacker: never served; past its share refused at once (503), and each of its bodies that did not
    // come refused (408) and counted toward its lock-out (acted out to the end in deliveryGate.test.ts).
    const statuses = attacker.flat();
    expect(statuses).not.toContain(200);
    expect(statuses).toContain(503);
    const timeouts = r.logs.filter((l) => l.refusal === 'body_timeout');
    expect(statuses.filter((status) => status === 408).length).toBeGreaterThanOrEqual(16);
    expect(timeouts.length).toBe(statuses.filter((status) => status === 408).length);
    expect(new Set(timeouts.map((l) => l.client))).toEqual(new Set([ATTACKER]));
  },
  ATTACK_MS + 40_000,
);
