import { describe, expect, it } from 'vitest';
import {
  floorSeconds,
  gatingTable,
  parseGatingArgs,
  runGatingBench,
  runGatingStormBench,
  runSharedRecheckBench,
} from '../../bench/gating.ts';

describe('gating benchmark', () => {
  it('reads the documented flags and refuses bad ones', () => {
    expect(
      parseGatingArgs([
        '--members',
        '10000',
        '--upstream-rps',
        '500',
        '--discord-rps',
        '50',
        '--change-ratio',
        '0.05',
      ]),
    ).toEqual({ members: 10_000, upstreamRps: 500, discordRps: 50, changeRatio: 0.05 });
    expect(parseGatingArgs(['--client-rps', '500', '--client-rps', '490', '--quick'])).toEqual({
      clientRps: [500, 490],
      quick: true,
    });
    expect(() => parseGatingArgs(['--members'])).toThrow('--members needs a positive number');
    expect(() => parseGatingArgs(['--change-ratio', '2'])).toThrow('between 0 and 1');
    expect(() => parseGatingArgs(['--fast'])).toThrow('unknown option --fast');
  });

  it('takes the slower of the two limits as the floor, since lookups and edits overlap', () => {
    expect(floorSeconds(10_000, 500, 500, 50)).toBe(20);
    expect(floorSeconds(1_000, 500, 500, 50)).toBe(10);
  });

  it('a small run edits exactly the members that need it, without a Discord 429', async () => {
    const rows = await runGatingBench({ members: 200, upstreamRps: 400, discordRps: 20, clientRps: [380] });
    expect(rows).toHaveLength(1);
    const [row] = rows;
    expect(row).toMatchObject({
      Members: 200,
      'Upstream requests': 200,
      'Upstream 429s': 0,
      'Role edits made / needed': '10 / 10',
      'Discord 429s': 0,
      'Lookup failures': 0,
      'Floor (s)': '0.5',
    });
    const table = gatingTable(rows, { upstreamRps: 400, discordRps: 20 });
    expect(table.columns[0]).toBe('Client limiter');
    expect(table.rows[0]?.[0]).toBe('380/s (95% of upstream)');
  });

  it('the incident row: "not found" answers for known identities remove nothing and alert once', async () => {
    const rows = await runGatingStormBench({ members: 60 });
    expect(rows.map((r) => [r['Roles removed'], r['Breaker alerts posted (total)'], r.Result])).toEqual([
      [0, 1, 'PASS'],
      [0, 1, 'PASS'],
    ]);
    expect(rows[0]?.['Held by breaker']).toBe(18);
  });

  it('two processes on one PostgreSQL: one walks the guild, each member is looked up once', async () => {
    const [row] = await runSharedRecheckBench({ members: 100 });
    expect(row).toMatchObject({
      'Processes that walked the guild': 1,
      'Credential lookups': 100,
      'Role edits made / needed': '5 / 5',
      Result: 'PASS',
    });
  });
});
