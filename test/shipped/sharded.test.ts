/**
 * The built bot sharded as `npm start` runs it for many servers: SHARD_COUNT=2, a shard manager (which
 * serves the pages) and one process per shard, on PostgreSQL and Redis. The scenario (scenario.ts) plays
 * in a guild of shard 1, so what it touches is done by that shard's process, the sign-in by the manager.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeDiscord, startFakeDiscord } from '../../fakes/discord/server.ts';
import { snowflakeOnShard } from '../../fakes/discord/snowflake.ts';
import { type FakeWeb3Bio, startFakeWeb3Bio } from '../../fakes/web3bio/server.ts';
import type { LogLine } from '../e2e/harness.ts';
import { createDatabase } from '../e2e/postgresDatabase.ts';
import { freePort } from '../e2e/processes.ts';
import { actOut, type Deployment, redisPrefix, seedGuild, sharedEnv } from './scenario.ts';
import { READY, type ShippedProcess, startShipped } from './shippedBot.ts';

describe('npm start with SHARD_COUNT=2: a shard manager and a process per shard', () => {
  let discord: FakeDiscord;
  let upstream: FakeWeb3Bio;
  let db: Awaited<ReturnType<typeof createDatabase>>;
  let manager: ShippedProcess;
  let deployment: Deployment;

  beforeAll(async () => {
    [discord, upstream, db] = await Promise.all([
      startFakeDiscord(),
      startFakeWeb3Bio(),
      createDatabase('shipped_sharded'),
    ]);
    discord.addGuild({ id: snowflakeOnShard(0, 2), name: 'Shard 0 guild' });
    const { guild, humanRoleId } = seedGuild(discord, snowflakeOnShard(1, 2));
    const prefix = redisPrefix('sharded');
    const port = await freePort();
    manager = await startShipped(
      {
        ...sharedEnv(discord, upstream, db.url, prefix),
        HTTP_PORT: String(port),
        SHARD_COUNT: '2',
        SHARDS_PER_PROCESS: '1',
        SHARD_SPAWN_DELAY_SECONDS: '0',
      },
      READY.shards,
    );
    deployment = {
      discord,
      upstream,
      guild,
      humanRoleId,
      pagesUrl: `http://127.0.0.1:${port}`,
      databaseUrl: db.url,
      redisPrefix: prefix,
      processes: () => [manager],
    };
  }, 120_000);

  afterAll(async () => {
    await manager?.stop(20_000);
    await Promise.all([discord?.close(), upstream?.close()]);
    await db?.drop();
  });

  it('runs each shard in a process of its own, started with npm start’s flags', () => {
    expect(discord.gatewayShards.map((s) => s.join('/')).sort()).toEqual(['0/2', '1/2']);
    const ready = manager.logLines().filter((l: LogLine) => l.msg === 'bot ready');
    expect(ready.map((l) => (l.shards as number[]).join()).sort()).toEqual(['0', '1']);
    expect(new Set(ready.map((l) => l.pid)).size).toBe(2);
  });

  actOut(() => deployment);
});
