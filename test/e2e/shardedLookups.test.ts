/**
 * `/forget-lookups` in a sharded bot without Redis: each shard process keeps the lookups made through its
 * own shards in memory, and a forget run through one shard clears the member's lookups in every process
 * (the shard manager relays it over IPC). Played with two shard processes (`node src/app/main.js` with
 * SHARD_COUNT), a server on each shard, against the stand-in Discord and Web3.bio.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeDiscord, FakeGuild } from '../../fakes/discord/server.ts';
import { startFakeDiscord } from '../../fakes/discord/server.ts';
import { snowflakeOnShard } from '../../fakes/discord/snowflake.ts';
import { ensProfile, nextAddress } from '../../fakes/web3bio/builders.ts';
import { type FakeWeb3Bio, startFakeWeb3Bio } from '../../fakes/web3bio/server.ts';
import { ALICE, BOB, isEphemeral, visibleMessage } from './harness.ts';
import { freePort, type NodeProcess } from './processes.ts';
import { allShardsReady, runShardManager, tearDownShardedRun } from './shardManager.ts';

let discord: FakeDiscord;
let upstream: FakeWeb3Bio;
let manager: NodeProcess;
let workDir: string;
const guilds: FakeGuild[] = [];

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'e2e-sharded-lookups-'));
  discord = await startFakeDiscord({ recommendedShards: 2, heartbeatIntervalMs: 500 });
  upstream = await startFakeWeb3Bio();
  for (const shard of [0, 1]) {
    const guild = discord.addGuild({ id: snowflakeOnShard(shard, 2), name: `Shard ${shard} guild` });
    discord.addMember(guild.id, { id: ALICE, username: 'alice' });
    discord.addMember(guild.id, { id: BOB, username: 'bob' });
    guilds.push(guild);
  }
  manager = runShardManager({ discord, upstream }, workDir, {
    WEB3BIO_RATE_LIMIT: 'off',
    HTTP_PORT: String(await freePort()),
    SHARD_COUNT: '2',
    USER_COOLDOWN_COMMANDS: '0',
  });
  await allShardsReady(manager);
}, 90_000);

afterAll(() => tearDownShardedRun({ manager, discord, upstream, workDir }));

/** What `userId` is offered typing `typed` into /whois in `guild` (answered by that guild's shard process). */
async function offered(guild: FakeGuild, userId: string, typed: string): Promise<string[]> {
  const result = await discord.typeInOption({
    name: 'whois',
    focused: 'identity',
    value: typed,
    userId,
    guildId: guild.id,
    options: [],
    timeoutMs: 10_000,
  });
  const choices = result.callbacks[0]?.data?.choices as { value: string }[] | undefined;
  if (!choices) throw new Error('no autocomplete answer');
  return choices.map((c) => c.value);
}

describe('/forget-lookups with SHARD_COUNT and no REDIS_URL', () => {
  it('clears the member’s public lookups in every shard process, and says how many', async () => {
    const names: string[][] = [[], []];
    for (const [shard, guild] of guilds.entries()) {
      for (let i = 0; i < 13; i += 1) {
        const name = `shard${shard}n${String(i).padStart(2, '0')}.eth`;
        upstream.world.addProfile(ensProfile(name, nextAddress()));
        const result = await discord.runCommand({
          name: 'whois',
          guildId: guild.id,
          userId: ALICE,
          options: [{ type: 3, name: 'identity', value: name }],
          timeoutMs: 10_000,
        });
        expect(visibleMessage(result).embeds[0]?.title).toContain(name);
        names[shard]?.push(name);
      }
    }
    // Each server's members are offered what Alice looked up there, from that shard process's memory.
    for (const [shard, guild] of guilds.entries())
      expect(await offered(guild, BOB, `shard${shard}n`)).toEqual(expect.arrayContaining(names[shard] ?? []));

    const [first, second] = guilds;
    if (!first || !second) throw new Error('two guilds expected');
    const forgot = await discord.runCommand({
      name: 'forget-lookups',
      guildId: first.id,
      userId: ALICE,
      timeoutMs: 10_000,
    });
    const reply = visibleMessage(forgot);
    expect(isEphemeral(reply)).toBe(true);
    // 13 in each process's own list of hers; 26 public ones out of the two servers' lists.
    expect(reply.content).toContain('Forgot your 26 recent lookups.');
    expect(reply.content).toContain(
      'Took 26 public lookups of yours out of what other members are offered in 2 servers.',
    );
    for (const [shard, guild] of guilds.entries()) {
      const left = await offered(guild, BOB, `shard${shard}n`);
      expect(left.filter((value) => names.flat().includes(value))).toEqual([]);
      expect((await offered(guild, ALICE, 'shard')).filter((value) => names.flat().includes(value))).toEqual(
        [],
      );
    }
  }, 60_000);
});
