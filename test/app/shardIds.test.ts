/** SHARD_IDS (issue #37): the ids and ranges a machine runs, and the share of the bot's budget its processes take. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseShardIds } from '../../src/app/shardIds.ts';
import { shardProcessSlice } from '../../src/app/sharding.ts';

describe('parseShardIds', () => {
  it.each([
    ['0-3', [0, 1, 2, 3]],
    ['0,2,4', [0, 2, 4]],
    [' 8 - 9 , 0 ,8', [0, 8, 9]],
    ['16383', [16_383]],
  ])('reads %s', (text, ids) => {
    expect(parseShardIds(text)).toEqual({ ok: true, ids });
  });

  it.each([
    ['', '"" is neither a shard id nor a range such as 0-15'],
    ['0,,1', '"" is neither a shard id nor a range such as 0-15'],
    ['-1', '"-1" is neither a shard id nor a range such as 0-15'],
    ['a-b', '"a-b" is neither a shard id nor a range such as 0-15'],
    ['4-2', 'the range 4-2 runs backwards'],
    ['0-16384', 'shard ids go up to 16383'],
  ])('refuses %j', (text, problem) => {
    expect(parseShardIds(text)).toEqual({ ok: false, problem });
  });
});

describe('shardProcessSlice', () => {
  afterEach(() => vi.unstubAllEnvs());

  const asShardProcess = (env: Record<string, string>) => {
    vi.stubEnv('CLUSTER_MANAGER_MODE', 'process');
    for (const [key, value] of Object.entries(env)) vi.stubEnv(key, value);
    return shardProcessSlice(process.env);
  };

  it("counts every machine's processes for the member-list budget when the shards are split", () => {
    // 32 shards, this machine 0-15 in 2 processes: the bot runs about 4 processes in all.
    const split = asShardProcess({
      SHARD_LIST: '8,9,10,11,12,13,14,15',
      TOTAL_SHARDS: '32',
      CLUSTER_COUNT: '2',
      CLUSTER: '8',
      SHARD_IDS: '0-15',
    });
    expect(split).toEqual({
      processId: 8,
      shards: { ids: [8, 9, 10, 11, 12, 13, 14, 15], count: 32, processes: 4 },
    });
  });

  it('counts this machine alone when it runs every shard', () => {
    const whole = asShardProcess({ SHARD_LIST: '0,1', TOTAL_SHARDS: '4', CLUSTER_COUNT: '2', CLUSTER: '0' });
    expect(whole?.shards.processes).toBe(2);
  });
});
