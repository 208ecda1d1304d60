/**
 * The bundle `npm start` runs, as two web replicas sharing the local Redis, the second reaching it over a
 * link slow to connect (800 ms, as to a managed Redis in another zone). Replica A answers a /whois; the
 * exact signed bytes are replayed to B the moment B says it is ready. B must judge that first delivery
 * against the shared set: before, it listened before its Redis client was connected, judged its first
 * deliveries by its own (empty) set as in an outage, and acted on the replay.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InteractionResult } from '../../fakes/discord/interactions.ts';
import { type FakeDiscord, startFakeDiscord } from '../../fakes/discord/server.ts';
import { deleteKeys, REDIS_URL } from '../../fakes/localRedis.ts';
import { type SlowLink, startSlowLink } from '../../fakes/slowLink.ts';
import { rawProfile } from '../../fakes/web3bio/builders.ts';
import { type FakeWeb3Bio, startFakeWeb3Bio } from '../../fakes/web3bio/server.ts';
import { closeRedisClient, createRedisClient, untilRedisReady } from '../../src/cache/redisStore.ts';
import { BOB, toCommandOptions, visibleMessage } from '../e2e/harness.ts';
import { freePort } from '../e2e/processes.ts';
import { READY, replicaEnv, type ShippedProcess, startShipped } from './shippedBot.ts';

const LINK_DELAY_MS = 800;

describe('npm start: a web replica whose Redis is slow to connect', () => {
  const prefix = `replica-start-${randomUUID()}:`;
  let discord: FakeDiscord;
  let upstream: FakeWeb3Bio;
  let link: SlowLink;
  const bots: ShippedProcess[] = [];

  const replica = async (redisUrl: string) => {
    const port = await freePort();
    const bot = await startShipped(
      {
        ...replicaEnv(discord, upstream, port),
        REDIS_URL: redisUrl,
        REDIS_PREFIX: prefix,
        USER_COOLDOWN_COMMANDS: '0',
        LOG_LEVEL: 'info',
      },
      READY.replica,
    );
    bots.push(bot);
    return { bot, endpoint: `http://127.0.0.1:${port}/interactions` };
  };

  const send = async (result: InteractionResult, endpoint: string) => {
    const sent = result.delivery?.sent;
    if (!sent) throw new Error('the stand-in recorded no bytes');
    const answer = await fetch(endpoint, { method: 'POST', body: sent.body, headers: sent.headers });
    return { status: answer.status, text: await answer.text() };
  };

  beforeAll(async () => {
    discord = await startFakeDiscord();
    upstream = await startFakeWeb3Bio();
    const guild = discord.addGuild({ name: 'Start Guild' });
    discord.addMember(guild.id, { id: BOB, username: 'bob' });
    upstream.world.addProfile(rawProfile('ens', 'first.eth', `0x${'1'.repeat(40)}`));
    const target = new URL(REDIS_URL);
    link = await startSlowLink({ host: target.hostname, port: Number(target.port) }, LINK_DELAY_MS);
  });

  afterAll(async () => {
    for (const bot of bots) await bot.stop();
    await Promise.all([discord?.close(), upstream?.close(), link?.close()]);
    const admin = createRedisClient(REDIS_URL);
    await untilRedisReady(admin);
    await deleteKeys(admin, `${prefix}*`);
    await closeRedisClient(admin);
  });

  it('a delivery replica A answered, replayed to B as B comes up, is refused; a new one is answered by B', async () => {
    const a = await replica(REDIS_URL);
    discord.useInteractionsEndpoint(a.endpoint);
    const answered = await discord.runCommand({
      name: 'whois',
      userId: BOB,
      options: toCommandOptions({ identity: 'first.eth' }),
    });
    expect(visibleMessage(answered).embeds[0]?.author?.name).toContain('first.eth');

    const b = await replica(`redis://127.0.0.1:${link.port}`);
    // The moment B says it is ready: its first delivery is the replay.
    const replayed = await send(answered, b.endpoint);
    expect(replayed.status).toBe(401);
    expect(replayed.text).not.toContain('first.eth');
    await b.bot.waitForLog(
      (l) => l.msg === 'interaction delivery refused' && l.refusal === 'replayed',
      5_000,
    );
    expect(b.bot.logLines().some((l) => String(l.msg).startsWith('Redis unreachable'))).toBe(false);

    // Honest control: a delivery never seen is answered by B.
    discord.useInteractionsEndpoint(b.endpoint);
    const fresh = await discord.runCommand({
      name: 'whois',
      userId: BOB,
      options: toCommandOptions({ identity: 'first.eth' }),
    });
    expect(visibleMessage(fresh).embeds[0]?.author?.name).toContain('first.eth');
  }, 60_000);
});
