/**
 * The bundle `npm start` runs, as two web replicas (INTERACTIONS=http) sharing a Redis of the test's own
 * without persistence, as compose runs it. The Redis is killed and started again empty; the exact signed
 * bytes of deliveries already answered are then sent to the OTHER replica: none is acted on again (the
 * stand-in Discord sees each interaction's answer once), while new deliveries are answered.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InteractionResult } from '../../fakes/discord/interactions.ts';
import { type FakeDiscord, startFakeDiscord } from '../../fakes/discord/server.ts';
import { type OwnRedis, startOwnRedis } from '../../fakes/redisServer.ts';
import { rawProfile } from '../../fakes/web3bio/builders.ts';
import { type FakeWeb3Bio, startFakeWeb3Bio } from '../../fakes/web3bio/server.ts';
import { ALICE, BOB, toCommandOptions, visibleMessage } from '../e2e/harness.ts';
import { freePort } from '../e2e/processes.ts';
import { READY, replicaEnv, type ShippedProcess, startShipped } from './shippedBot.ts';

interface Replica {
  bot: ShippedProcess;
  endpoint: string;
}

describe('npm start: two web replicas across a Redis killed and started again empty', () => {
  let redis: OwnRedis;
  let discord: FakeDiscord;
  let upstream: FakeWeb3Bio;
  const replicas: Replica[] = [];

  const start = async (): Promise<Replica> => {
    const port = await freePort();
    const bot = await startShipped(
      {
        ...replicaEnv(discord, upstream, port),
        REDIS_URL: redis.url,
        // Every answer is deferred and then edited in through the stand-in: each edit is an answer it saw.
        DEFER_AFTER_MS: '0',
        USER_COOLDOWN_COMMANDS: '100',
        LOG_LEVEL: 'info',
      },
      READY.replica,
    );
    const replica = { bot, endpoint: `http://127.0.0.1:${port}/interactions` };
    replicas.push(replica);
    return replica;
  };

  let profiles = 0;
  /** A /whois of a name not looked up before, run through `replica` by the stand-in Discord, answered. */
  const whois = async (replica: Replica): Promise<InteractionResult> => {
    profiles++;
    const identity = `replay-${profiles}.eth`;
    upstream.world.addProfile(rawProfile('ens', identity, `0x${profiles.toString(16).padStart(40, '0')}`));
    discord.useInteractionsEndpoint(replica.endpoint);
    const result = await discord.runCommand({
      name: 'whois',
      userId: BOB,
      options: toCommandOptions({ identity }),
    });
    expect(visibleMessage(result).embeds[0]?.author?.name).toContain(identity);
    return result;
  };

  /** The edits of an interaction's reply the stand-in received: one per time it was acted on. */
  const answersTo = (result: InteractionResult) => {
    const token = JSON.parse(result.delivery?.sent?.body ?? '{}').token as string;
    return discord.requests.filter(
      (r) => r.method === 'PATCH' && r.path.endsWith(`/${token}/messages/@original`),
    ).length;
  };

  /** Sends the captured bytes until the answer is not "wait" (503): every status, in order. */
  const replay = async (result: InteractionResult, to: Replica): Promise<number[]> => {
    const sent = result.delivery?.sent;
    if (!sent) throw new Error('the stand-in recorded no bytes');
    const statuses: number[] = [];
    const deadline = Date.now() + 20_000;
    do {
      const answer = await fetch(to.endpoint, { method: 'POST', body: sent.body, headers: sent.headers });
      await answer.arrayBuffer();
      statuses.push(answer.status);
      if (answer.status === 503) {
        expect(answer.headers.get('retry-after')).toBe('1');
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    } while (statuses.at(-1) === 503 && Date.now() < deadline);
    return statuses;
  };

  beforeAll(async () => {
    redis = await startOwnRedis();
    discord = await startFakeDiscord();
    // Slower than DEFER_AFTER_MS: each /whois of a new name is deferred, then edited.
    upstream = await startFakeWeb3Bio({ latencyMs: 100 });
    const guild = discord.addGuild({ name: 'Replay Guild' });
    discord.addMember(guild.id, { id: ALICE, username: 'alice' });
    discord.addMember(guild.id, { id: BOB, username: 'bob' });
    await start();
    await start();
    // A Redis started moments ago holds the first deliveries while its first generation settles (3 s).
    for (const replica of replicas) {
      const deadline = Date.now() + 15_000;
      while ((await discord.pingInteractionsEndpoint(replica.endpoint)).status !== 200) {
        if (Date.now() > deadline) throw new Error(`${replica.endpoint} never answered a PING`);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
  }, 90_000);

  afterAll(async () => {
    for (const replica of replicas) await replica.bot.stop();
    await Promise.all([discord?.close(), upstream?.close(), redis?.close()]);
  });

  it('replays of deliveries answered before the restart, sent to the other replica, are never answered again; new deliveries are', async () => {
    const [a, b] = replicas as [Replica, Replica];
    const byA = [await whois(a), await whois(a)];
    const byB = [await whois(b)];
    // Before the restart the shared set already refuses them on the other replica.
    expect(await replay(byA[0] as InteractionResult, b)).toEqual([401]);

    await redis.kill();
    await redis.restart();
    // Each replica reconnects, finds the set gone and writes back what it remembers.
    for (const { bot } of [a, b])
      await bot.waitForLog((line) => String(line.msg).startsWith('Redis lost the shared deliveries'), 10_000);

    const statuses = await Promise.all([...byA.map((r) => replay(r, b)), ...byB.map((r) => replay(r, a))]);
    for (const each of statuses) {
      expect(each.at(-1)).toBe(401);
      expect(each.filter((status) => status !== 503)).toEqual([401]);
    }
    // Sent while the replicas were writing back: at least the first were told to wait, not answered.
    expect(statuses.some((each) => each[0] === 503)).toBe(true);
    const refusedForNow = () =>
      [a, b].flatMap(({ bot }) =>
        bot.logLines().filter((l) => String(l.msg).startsWith('interaction refused for now')),
      ).length;
    await expect.poll(refusedForNow, { timeout: 5_000 }).toBeGreaterThan(0);
    for (const result of [...byA, ...byB]) expect(answersTo(result)).toBe(1);
    // The child's log line comes over a pipe and may arrive after its 401: wait for it, then count exactly.
    const replayedOnB = () =>
      b.bot.logLines().filter((l) => l.msg === 'interaction delivery refused' && l.refusal === 'replayed');
    await expect.poll(() => replayedOnB().length, { timeout: 5_000 }).toBeGreaterThanOrEqual(byA.length + 1);
    expect(replayedOnB()).toHaveLength(byA.length + 1);

    // Honest control: deliveries never seen are answered, on either replica, once each.
    const fresh = [await whois(b), await whois(a)];
    for (const result of fresh) expect(answersTo(result)).toBe(1);
    expect(await replay(fresh[0] as InteractionResult, a)).toEqual([401]);
  }, 60_000);
});
