import { describe, expect, it } from 'vitest';
import {
  baselineHeaders,
  cpuLine,
  cspTemplate,
  verdictLine,
  WEB_COLUMNS,
  type WebRound,
  webRows,
} from '../../bench/web.ts';

describe('baselineHeaders', () => {
  it('keeps the response headers but the per-connection and per-response ones', () => {
    expect(
      baselineHeaders({
        'X-Frame-Options': 'DENY',
        'cache-control': 'no-store, max-age=0',
        'content-type': 'text/html; charset=utf-8',
        'content-security-policy': "script-src 'nonce-abc'",
        'content-length': '9834',
        date: 'Wed, 25 Nov 2026 20:07:45 GMT',
        connection: 'keep-alive',
        'keep-alive': 'timeout=5',
        'transfer-encoding': 'chunked',
        vary: ['a', 'b'],
        missing: undefined,
      }),
    ).toEqual({
      'x-frame-options': 'DENY',
      'cache-control': 'no-store, max-age=0',
      'content-type': 'text/html; charset=utf-8',
      vary: 'a, b',
    });
  });
});

describe('cspTemplate', () => {
  it('puts the new nonce wherever the sample had its own', () => {
    const csp = cspTemplate(
      "default-src 'none'; script-src 'nonce-ab+/c=='; style-src 'nonce-ab+/c=='; connect-src 'self'",
    );
    expect(csp('XYZ')).toBe(
      "default-src 'none'; script-src 'nonce-XYZ'; style-src 'nonce-XYZ'; connect-src 'self'",
    );
  });

  it('refuses a policy without a nonce', () => {
    expect(() => cspTemplate("default-src 'none'")).toThrow(/no nonce/);
  });
});

function round(p50: number, perSecond: number, cpu = 100, failures = 0): WebRound {
  return {
    latency: { n: 100, min: p50 / 2, p50, p90: p50 * 2, p99: p50 * 3, max: p50 * 4, mean: p50 },
    perSecond,
    requests: 100,
    failures,
    cpuMicrosPerRequest: cpu,
  };
}

const column = (name: (typeof WEB_COLUMNS)[number]) => WEB_COLUMNS.indexOf(name);

describe('webRows', () => {
  it('reports medians of rounds and the median of paired per-round ratios', () => {
    const rows = webRows(
      [round(1.2, 800, 150), round(2.4, 400, 150), round(1.1, 900, 160)],
      [round(1, 1_000, 100), round(2, 500, 100), round(1, 1_000, 110)],
    );
    expect(rows.map((row) => row[0])).toEqual(['Fastify app (startWebServer)', 'bare node:http']);
    const [fastify = [], baseline = []] = rows;
    expect(fastify[column('p50 ms')]).toBe('1.200');
    expect(fastify[column('requests/s')]).toBe('800');
    expect(fastify[column('requests')]).toBe('300');
    expect(fastify[column('p50 ratio vs node:http')]).toBe('1.20×');
    expect(fastify[column('req/s ratio')]).toBe('0.80×');
    expect(fastify[column('Result')]).toBe('PASS');
    expect(baseline[column('p50 ratio vs node:http')]).toBe('1.00×');
    expect(baseline[column('Result')]).toBe('');
    expect(verdictLine(rows)).toMatch(/1\.20× node:http's, within the 1\.3× acceptance \(PASS\)/);
    expect(cpuLine([round(1, 1, 150)], [round(1, 1, 100)])).toContain(
      'Fastify 150 µs, node:http 100 µs (1.50×, +50 µs',
    );
  });

  it('misses above 1.3× and on any answer other than 200', () => {
    const slow = webRows([round(1.4, 700)], [round(1, 1_000)]);
    expect(slow[0]?.[column('Result')]).toBe('MISS');
    expect(verdictLine(slow)).toMatch(/1\.40× node:http's .* does not hold \(MISS\)/);
    const refused = webRows([round(1, 1_000, 100, 3)], [round(1, 1_000)]);
    expect(refused[0]?.[column('non-200')]).toBe('3');
    expect(refused[0]?.[column('Result')]).toBe('MISS');
  });
});
