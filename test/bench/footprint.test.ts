/** The lean-processes benchmark's pure parts (issue #37): reading /proc status, and judging the ratio. */
import { expect, it } from 'vitest';
import { footprintTable, rssParts } from '../../bench/footprint.ts';

const MIB = 1024 * 1024;

it('reads RSS and its anonymous and file-backed parts from /proc/<pid>/status', () => {
  const status =
    'Name:\tnode\nVmRSS:\t  102400 kB\nRssAnon:\t   61440 kB\nRssFile:\t   40000 kB\nRssShmem:\t    1000 kB\n';
  expect(rssParts(status)).toEqual({ rss: 100 * MIB, anon: 60 * MIB, file: 41_000 * 1024 });
});

it('judges the shard process against the replica by the medians of their starts', () => {
  const at = (rss: number) => ({ rss: rss * MIB, anon: 0, file: 0, manager: 90 * MIB });
  const replica = [at(80), at(90), at(100)];
  const within = footprintTable(
    { replica, shard: [at(120), at(135), at(200)], 'shard-sources': [at(300)] },
    3,
  );
  expect(within.rows[1]?.slice(-3)).toEqual(['1.50×', '≤ 1.5× the replica', 'PASS']);
  const over = footprintTable({ replica, shard: [at(136), at(136), at(20)], 'shard-sources': [at(300)] }, 3);
  expect(over.rows[1]?.slice(-3)).toEqual(['1.51×', '≤ 1.5× the replica', 'MISS']);
});
