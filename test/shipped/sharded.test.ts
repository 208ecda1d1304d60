/**
 * The built bot sharded as `npm start` runs it for many servers: SHARD_COUNT=2, a shard manager (which
 * serves the pages) and one process per shard, on PostgreSQL and Redis. The scenario (scenario.ts) plays
 * in a guild of shard 1, so what it touches is done by that shard's process, the sign-in by the manager.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { snowflakeOnShard } from '../../fakes/discord/snowflake.ts';
import type { LogLine } from '../e2e/harness.ts';
import { freePort } from '../e2e/processes.ts';
import { actOut, type Deployment, type Stage, seedGuild, startStage } from './scenario.ts';
import { npmStart, READY, type ShippedProcess, shippedMain, startShipped } from './shippedBot.ts';

describe('npm start with SHARD_COUNT=2: a shard manager and a process per shard', () => {
  let stage: Stage;
  let manager: ShippedProcess;
  let deployment: Deployment;

  beforeAll(async () => {
    stage = await startStage('sharded');
    stage.discord.addGuild({ id: snowflakeOnShard(0, 2), name: 'Shard 0 guild' });
    const seeded = seedGuild(stage.discord, snowflakeOnShard(1, 2));
    const port = await freePort();
    manager = await startShipped(
      {
        ...stage.env,
        HTTP_PORT: String(port),
        SHARD_COUNT: '2',
        SHARDS_PER_PROCESS: '1',
        SHARD_SPAWN_DELAY_SECONDS: '0',
      },
      READY.shards,
    );
    deployment = { ...stage, ...seeded, pagesUrl: `http://127.0.0.1:${port}`, processes: () => [manager] };
  }, 120_000);

  afterAll(async () => {
    await manager?.stop(20_000);
    await stage?.close();
  });

  it('runs each shard in a process of its own, started with npm start’s flags', () => {
    expect(stage.discord.gatewayShards.map((s) => s.join('/')).sort()).toEqual(['0/2', '1/2']);
    const ready = manager.logLines().filter((l: LogLine) => l.msg === 'bot ready');
    expect(ready.map((l) => (l.shards as number[]).join()).sort()).toEqual(['0', '1']);
    expect(new Set(ready.map((l) => l.pid)).size).toBe(2);
    // Each shard process runs the bundle's entry with the flags npm start gave the manager.
    const { flags } = npmStart();
    for (const line of ready) {
      const argv = readFileSync(`/proc/${line.pid}/cmdline`, 'utf8').split('\0');
      expect(argv).toEqual(expect.arrayContaining([...flags, shippedMain()]));
    }
  });

  actOut(() => deployment);
});
