import { describe, expect, it } from 'vitest';
import { parseRunArgs } from '../../bench/run.ts';
import {
  type BenchTable,
  formatBytes,
  formatNumber,
  formatRatio,
  median,
  medianOfRounds,
  percentile,
  renderTable,
  rotate,
  summarize,
  tableFromRecords,
  verdict,
} from '../../bench/stats.ts';

const ONE_TO_HUNDRED = Array.from({ length: 100 }, (_, i) => i + 1);

describe('percentile', () => {
  it('uses the nearest rank', () => {
    expect(percentile(ONE_TO_HUNDRED, 50)).toBe(50);
    expect(percentile(ONE_TO_HUNDRED, 99)).toBe(99);
    expect(percentile(ONE_TO_HUNDRED, 99.5)).toBe(100);
    expect(percentile([10, 20, 30], 50)).toBe(20);
    expect(percentile([10, 20, 30, 40], 50)).toBe(20);
  });

  it('answers the extremes at 0 and 100 and clamps beyond', () => {
    expect(percentile([3, 7, 9], 0)).toBe(3);
    expect(percentile([3, 7, 9], 100)).toBe(9);
    expect(percentile([3, 7, 9], -5)).toBe(3);
    expect(percentile([3, 7, 9], 250)).toBe(9);
  });

  it('is NaN for no samples', () => {
    expect(percentile([], 50)).toBeNaN();
  });
});

describe('median', () => {
  it('takes the middle of an odd count and the mean of the middle two of an even one, unsorted input', () => {
    expect(median([5, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([7])).toBe(7);
  });

  it('does not reorder its input and is NaN when empty', () => {
    const values = [3, 1, 2];
    median(values);
    expect(values).toEqual([3, 1, 2]);
    expect(median([])).toBeNaN();
  });
});

describe('summarize', () => {
  it('sorts numerically (not as text) and reports count, extremes, mean and percentiles', () => {
    const summary = summarize([100, 9, 20, 3]);
    expect(summary).toEqual({ n: 4, min: 3, p50: 9, p90: 100, p99: 100, max: 100, mean: 33 });
  });

  it('handles the usual 1..100 case', () => {
    const summary = summarize([...ONE_TO_HUNDRED].reverse());
    expect(summary.p50).toBe(50);
    expect(summary.p90).toBe(90);
    expect(summary.p99).toBe(99);
    expect(summary.mean).toBe(50.5);
  });

  it('is all NaN but n for no samples', () => {
    const summary = summarize([]);
    expect(summary.n).toBe(0);
    expect(summary.p50).toBeNaN();
    expect(summary.mean).toBeNaN();
  });
});

describe('medianOfRounds', () => {
  it('takes each field’s median across rounds and sums the counts', () => {
    const rounds = [summarize([1, 2, 3]), summarize([10, 20, 30]), summarize([4, 5, 6])];
    const result = medianOfRounds(rounds);
    expect(result.n).toBe(9);
    expect(result.p50).toBe(5);
    expect(result.min).toBe(4);
    expect(result.max).toBe(6);
  });
});

describe('formatting', () => {
  it('verdict says PASS or MISS', () => {
    expect(verdict(true)).toBe('PASS');
    expect(verdict(false)).toBe('MISS');
  });

  it('formatNumber keeps fewer decimals the larger the value, and separates thousands', () => {
    expect(formatNumber(1234567.8)).toBe('1,234,568');
    expect(formatNumber(123.4)).toBe('123');
    expect(formatNumber(12.345)).toBe('12.3');
    expect(formatNumber(1.2345)).toBe('1.23');
    expect(formatNumber(42)).toBe('42');
    expect(formatNumber(1.5, 3)).toBe('1.500');
    expect(formatNumber(Number.NaN)).toBe('n/a');
    expect(formatNumber(Number.POSITIVE_INFINITY)).toBe('n/a');
  });

  it('formatRatio divides and refuses a zero denominator', () => {
    expect(formatRatio(3, 2)).toBe('1.50×');
    expect(formatRatio(1, 0)).toBe('n/a');
  });

  it('formatBytes picks B, KiB or MiB', () => {
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatBytes(64 * 1024 * 1024)).toBe('64.0 MiB');
  });

  it('rotate shifts left and wraps, for any shift', () => {
    expect(rotate(['a', 'b', 'c'], 0)).toEqual(['a', 'b', 'c']);
    expect(rotate(['a', 'b', 'c'], 1)).toEqual(['b', 'c', 'a']);
    expect(rotate(['a', 'b', 'c'], 5)).toEqual(['c', 'a', 'b']);
    expect(rotate(['a', 'b', 'c'], -1)).toEqual(['c', 'a', 'b']);
    expect(rotate([], 3)).toEqual([]);
  });
});

describe('renderTable', () => {
  const table: BenchTable = {
    suite: 'Cache hit (issue #2)',
    method: '3 rounds, medians',
    targets: ['p99 < 50 µs'],
    columns: ['Case', 'p99 µs', 'Result'],
    rows: [
      ['warm | hit', '1,234.5', 'PASS'],
      ['cold', 7, 'MISS'],
    ],
    notes: ['cause: something'],
  };

  it('prints a heading, one line with machine, method and targets, and a markdown table', () => {
    const lines = renderTable(table, '2 cores, Node v26').split('\n');
    expect(lines[0]).toBe('### Cache hit (issue #2)');
    expect(lines[2]).toBe('Machine: 2 cores, Node v26. Method: 3 rounds, medians. Targets: p99 < 50 µs.');
    expect(lines[4]).toBe('| Case | p99 µs | Result |');
    expect(lines[5]).toBe('| --- | ---: | --- |');
    expect(lines[6]).toBe('| warm \\| hit | 1,234.5 | PASS |');
    expect(lines[7]).toBe('| cold | 7 | MISS |');
    expect(lines).toContain('- cause: something');
  });

  it('says "none" without targets and pads short rows', () => {
    const text = renderTable({ ...table, targets: [], rows: [['only one cell']], notes: [] }, 'm');
    expect(text).toContain('Targets: none.');
    expect(text).toContain('| only one cell |  |  |');
  });

  it('names the real machine by default', () => {
    expect(renderTable(table)).toMatch(/Machine: \d+ cores.*Node v\d+/);
  });
});

describe('tableFromRecords', () => {
  it('takes the union of keys in first-seen order and prints objects as JSON', () => {
    const result = tableFromRecords(
      'S',
      'M',
      [],
      [
        { members: 100, wall: 1.5 },
        { members: 200, extra: { a: 1 }, flag: true, missing: null },
      ],
    );
    expect(result.columns).toEqual(['members', 'wall', 'extra', 'flag', 'missing']);
    expect(result.rows).toEqual([
      [100, 1.5, '', '', ''],
      [200, '', '{"a":1}', 'true', ''],
    ]);
  });
});

describe('parseRunArgs', () => {
  it('runs every suite by default', () => {
    expect(parseRunArgs([])).toEqual({
      suites: [
        'client',
        'cache',
        'interaction',
        'shared-quota',
        'gating',
        'guild-scale',
        'web',
        'export',
        'http',
        'dashboard',
        'holdings',
        'footprint',
        'rest-proxy',
        'capacity',
      ],
      quick: false,
      help: false,
    });
  });

  it('reads --only (repeated, comma-separated or with =), --quick and --skip-gating', () => {
    expect(parseRunArgs(['--only', 'cache,client', '--quick']).suites).toEqual(['cache', 'client']);
    expect(parseRunArgs(['--only=interaction', '--only', 'gating']).suites).toEqual([
      'interaction',
      'gating',
    ]);
    expect(parseRunArgs(['--skip-gating']).suites).toEqual([
      'client',
      'cache',
      'interaction',
      'shared-quota',
      'guild-scale',
      'web',
      'export',
      'http',
      'dashboard',
      'holdings',
      'footprint',
      'rest-proxy',
      'capacity',
    ]);
    expect(parseRunArgs(['--only', 'capacity']).suites).toEqual(['capacity']);
    expect(parseRunArgs(['--only', 'holdings']).suites).toEqual(['holdings']);
    expect(parseRunArgs(['--only', 'rest-proxy']).suites).toEqual(['rest-proxy']);
    expect(parseRunArgs(['--only', 'http']).suites).toEqual(['http']);
    expect(parseRunArgs(['--only', 'web']).suites).toEqual(['web']);
    expect(parseRunArgs(['--only', 'dashboard']).suites).toEqual(['dashboard']);
    expect(parseRunArgs(['--only', 'export']).suites).toEqual(['export']);
    expect(parseRunArgs(['--only', 'guild-scale']).suites).toEqual(['guild-scale']);
    expect(parseRunArgs(['--only', 'shared-quota']).suites).toEqual(['shared-quota']);
    expect(parseRunArgs(['--only', 'gating', '--skip-gating']).suites).toEqual([]);
    expect(parseRunArgs(['--quick']).quick).toBe(true);
  });

  it('refuses unknown suites and options with the usage', () => {
    expect(() => parseRunArgs(['--only', 'nope'])).toThrow(/unknown suite "nope"[\s\S]*usage/);
    expect(() => parseRunArgs(['--only'])).toThrow(/needs a suite name/);
    expect(() => parseRunArgs(['--fast'])).toThrow(/unknown option --fast/);
  });
});
