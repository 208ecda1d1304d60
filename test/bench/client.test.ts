import { describe, expect, it } from 'vitest';
import { runClientBench } from '../../bench/client.ts';
import { renderTable } from '../../bench/stats.ts';

// A smoke run of the quick client suite: it must finish and print the expected rows. Timings are not
// asserted (the machine is shared); request counts are, since they do not depend on speed.
describe('quick client bench', () => {
  it('runs end to end and prints every expected row', async () => {
    const tables = await runClientBench({ quick: true, upstreamLatencyMs: 1 });
    expect(tables.map((t) => t.suite)).toEqual([
      expect.stringMatching(/^Cache miss: client.getProfiles/),
      expect.stringMatching(/^Single-flight: 1,000 concurrent getProfiles over 50 distinct identities/),
      expect.stringMatching(/^Batch: 300 identities through getProfilesBatch/),
    ]);
    const [miss, burst, batch] = tables;
    expect(miss?.rows.map((row) => `${row[0]} / ${row[1]}`)).toEqual([
      'sequential / client',
      'sequential / raw undici',
      'concurrency 8 / client',
      'concurrency 8 / raw undici',
    ]);
    for (const row of miss?.rows ?? []) expect(row[2]).toMatch(/^[\d,.]+$/);

    const column = (table: typeof burst, name: string) => table?.columns.indexOf(name) ?? -1;
    const burstRow = burst?.rows[0] ?? [];
    expect(burstRow[column(burst, 'Upstream requests (worst)')]).toBe('50');
    expect(burstRow[column(burst, 'Failed calls')]).toBe('0');
    expect(burstRow[column(burst, 'Result')]).toBe('PASS');

    expect(batch?.rows.map((row) => row[0])).toEqual([
      'batch (getProfilesBatch)',
      'single calls (getPlatformProfile)',
    ]);
    expect(batch?.rows.map((row) => row[column(batch, 'Upstream requests')])).toEqual(['10', '300']);
    expect(batch?.rows.map((row) => row[column(batch, 'Resolved')])).toEqual(['300/300', '300/300']);

    for (const table of tables) {
      const text = renderTable(table);
      expect(text).toContain(`### ${table.suite}`);
      expect(text).toMatch(/Machine: \d+ cores/);
      expect(text.split('\n').filter((line) => line.startsWith('| '))).toHaveLength(table.rows.length + 2);
    }
  });
});
