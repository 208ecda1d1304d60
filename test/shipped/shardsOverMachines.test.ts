/**
 * The built bot's shards split between two machines as `npm start` runs them (issue #37): two shard
 * managers on one PostgreSQL and one Redis, SHARD_COUNT=4, one with SHARD_IDS=0-1, the other with 2-3,
 * against a stand-in Discord whose `GET /gateway/bot` says max_concurrency 2 (buckets: shards 0 and 2,
 * shards 1 and 3). Every server is served by exactly one process; every identify goes through the bot's
 * one queue in Redis, so one bucket's identifies are 5 s apart across both machines even with no spawn
 * delay; a machine killed outright (manager and shard processes) comes back without touching the other's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { snowflakeOnShard } from '../../fakes/discord/snowflake.ts';
import { rawProfile } from '../../fakes/web3bio/builders.ts';
import { BOB, toCommandOptions, visibleMessage } from '../e2e/harness.ts';
import { freePort } from '../e2e/processes.ts';
import { type Stage, startStage } from './scenario.ts';
import { READY, type ShippedProcess, startShipped } from './shippedBot.ts';

const SHARDS = 4;
/** One guild on each shard. */
const GUILDS = Array.from({ length: SHARDS }, (_, shard) => snowflakeOnShard(shard, SHARDS));
const guildOn = (shard: number) => GUILDS[shard] ?? '';

describe('npm start on two machines: SHARD_IDS 0-1 and 2-3 of SHARD_COUNT=4', () => {
  let stage: Stage;
  const machines: Record<'a' | 'b', ShippedProcess | undefined> = { a: undefined, b: undefined };
  const shardIds = { a: '0-1', b: '2-3' } as const;

  const startMachine = async (name: 'a' | 'b') => {
    machines[name] = await startShipped(
      {
        ...stage.env,
        HTTP_PORT: String(await freePort()),
        SHARD_COUNT: String(SHARDS),
        SHARD_IDS: shardIds[name],
        SHARDS_PER_PROCESS: '1',
        // No spacing by the manager: the identify queue in Redis alone keeps Discord's 5 s.
        SHARD_SPAWN_DELAY_SECONDS: '0',
      },
      READY.shards,
      90_000,
    );
    return machines[name];
  };
  /** The pid of each shard process of a machine, from their "bot ready" lines. */
  const shardPids = (machine: ShippedProcess | undefined) =>
    (machine?.logLines() ?? []).filter((l) => l.msg === 'bot ready').map((l) => Number(l.pid));

  /** A /whois run in the guild of `shard`: answered (once) by whichever process serves it. */
  const whoisOn = async (shard: number) => {
    const identity = `shard-${shard}-${Date.now()}.eth`;
    stage.upstream.world.addProfile(rawProfile('ens', identity, `0x${String(shard).padStart(40, '0')}`));
    const result = await stage.discord.runCommand({
      name: 'whois',
      guildId: guildOn(shard),
      userId: BOB,
      options: toCommandOptions({ identity }),
      timeoutMs: 20_000,
    });
    return visibleMessage(result).embeds[0]?.author?.name ?? '';
  };

  beforeAll(async () => {
    stage = await startStage('shard_split', { maxConcurrency: 2 });
    for (let shard = 0; shard < SHARDS; shard++) {
      stage.discord.addGuild({ id: guildOn(shard), name: `Shard ${shard} guild` });
      stage.discord.addMember(guildOn(shard), { id: BOB, username: 'bob' });
    }
    await Promise.all([startMachine('a'), startMachine('b')]);
  }, 150_000);

  afterAll(async () => {
    await Promise.all([machines.a?.stop(20_000), machines.b?.stop(20_000)]);
    await stage?.close();
  });

  it('serves every shard in exactly one process, each machine its own', async () => {
    expect(stage.discord.gatewayIdentifies.map((i) => i.shard.join('/')).sort()).toEqual([
      '0/4',
      '1/4',
      '2/4',
      '3/4',
    ]);
    const shardsOf = (machine: ShippedProcess | undefined) =>
      (machine?.logLines() ?? [])
        .filter((l) => l.msg === 'bot ready')
        .flatMap((l) => l.shards as number[])
        .sort();
    expect(shardsOf(machines.a)).toEqual([0, 1]);
    expect(shardsOf(machines.b)).toEqual([2, 3]);
    for (let shard = 0; shard < SHARDS; shard++) expect(await whoisOn(shard)).toContain(`shard-${shard}-`);
  });

  it("spaces one bucket's identifies at least 5 s apart across both machines; the other bucket is not held", () => {
    const identifies = stage.discord.gatewayIdentifies;
    for (const bucket of [0, 1]) {
      const times = identifies.filter((i) => i.shard[0] % 2 === bucket).map((i) => i.at);
      expect(times).toHaveLength(2);
      expect(Math.abs((times[1] ?? 0) - (times[0] ?? 0))).toBeGreaterThanOrEqual(5_000);
    }
    // The first identify of each bucket went at once: the buckets do not wait for each other.
    const firsts = [0, 1].map((b) => identifies.find((i) => i.shard[0] % 2 === b)?.at ?? 0);
    expect(Math.abs((firsts[0] ?? 0) - (firsts[1] ?? 0))).toBeLessThan(5_000);
  });

  it("a machine killed outright comes back with its shards; the other machine's sessions are untouched", async () => {
    const before = stage.discord.gatewayIdentifies.length;
    const pidsOfB = shardPids(machines.b);
    const killed = machines.a;
    for (const pid of shardPids(killed)) process.kill(pid, 'SIGKILL');
    killed?.child.kill('SIGKILL');
    await killed?.stop(0);
    await startMachine('a');

    const again = stage.discord.gatewayIdentifies.slice(before).map((i) => i.shard[0]);
    expect(again.sort()).toEqual([0, 1]);
    for (const pid of pidsOfB) expect(() => process.kill(pid, 0)).not.toThrow();
    expect(shardPids(machines.b)).toEqual(pidsOfB);
    for (let shard = 0; shard < SHARDS; shard++) expect(await whoisOn(shard)).toContain(`shard-${shard}-`);
  }, 120_000);
});
