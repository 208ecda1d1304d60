import { describe, expect, it } from 'vitest';
import {
  affinityMask,
  type HttpRound,
  heapFigures,
  isWhoisAnswer,
  outcomeSummary,
  pairedRatio,
  presign,
  signingKeys,
  signRequest,
  THROUGHPUT_COLUMNS,
  throughputRows,
} from '../../bench/http.ts';
import { summarize } from '../../bench/stats.ts';
import { checkDiscordSignature } from '../../src/web/discordSignature.ts';
import { SeenDeliveries } from '../../src/web/seenDeliveries.ts';

describe('signRequest and presign', () => {
  it('sign as Discord does: the bot accepts the request with the public key in hex', () => {
    const { privateKey, publicKeyHex } = signingKeys();
    expect(publicKeyHex).toMatch(/^[0-9a-f]{64}$/);
    const now = 1_795_000_000;
    const request = signRequest(privateKey, '{"id":"1"}', now);
    expect(request.headers['x-signature-timestamp']).toBe(String(now));
    const check = (body: string, signature: string, key = publicKeyHex) =>
      checkDiscordSignature({
        publicKey: key,
        signature,
        timestamp: String(now),
        body: Buffer.from(body),
        now: now * 1_000,
      });
    expect(check(request.body, request.headers['x-signature-ed25519'])).toBe('ok');
    expect(check('{"id":"2"}', request.headers['x-signature-ed25519'])).toBe('bad_signature');
    expect(check(request.body, request.headers['x-signature-ed25519'], signingKeys().publicKeyHex)).toBe(
      'bad_signature',
    );
  });

  it('give distinct bodies distinct signatures, so none is refused as a replay', () => {
    const { privateKey } = signingKeys();
    const now = 1_795_000_000;
    const signed = presign(privateKey, ['{"id":"1"}', '{"id":"2"}', '{"id":"3"}'], now);
    expect(signed.map((request) => request.body)).toEqual(['{"id":"1"}', '{"id":"2"}', '{"id":"3"}']);
    const seen = new SeenDeliveries();
    expect(
      signed.every((request) => seen.firstSighting(request.headers['x-signature-ed25519'], now, now * 1_000)),
    ).toBe(true);
    expect(signed.every((request) => request.headers['x-signature-timestamp'] === String(now))).toBe(true);
  });
});

describe('isWhoisAnswer', () => {
  it('accepts a type-4 message with an embed only', () => {
    expect(isWhoisAnswer('{"type":4,"data":{"embeds":[{"title":"vitalik.eth"}]}}')).toBe(true);
    expect(isWhoisAnswer('{"type":4,"data":{"content":"pong","embeds":[]}}')).toBe(false);
    expect(isWhoisAnswer('{"type":5}')).toBe(false);
    expect(isWhoisAnswer('not json')).toBe(false);
  });
});

const round = (perSecond: number, failures = 0): HttpRound => ({
  latency: summarize([1, 2, 3]),
  perSecond,
  requests: 3,
  failures,
  wrong: 0,
  checked: 1,
  cpuMicrosPerRequest: 100,
  ranOut: false,
});

describe('throughput rows', () => {
  it('pair rounds in order and judge the replica against 0.7× the bare endpoint', () => {
    expect(pairedRatio([round(80), round(60)], [round(100), round(100)])).toBeCloseTo(0.7);
    const rows = throughputRows({
      replica: [round(80), round(70)],
      local: [round(90), round(80)],
      bare: [round(100), round(100)],
      gateway: [round(40), round(50)],
    });
    const at = (row: number, column: (typeof THROUGHPUT_COLUMNS)[number]) =>
      rows[row]?.[THROUGHPUT_COLUMNS.indexOf(column)];
    expect(at(0, 'throughput vs bare')).toBe('0.75×');
    expect(at(0, 'Result')).toBe('PASS');
    // The replica without Redis is shown for comparison, not judged.
    expect(at(1, 'throughput vs bare')).toBe('0.85×');
    expect(at(1, 'Result')).toBe('');
    expect(at(2, 'throughput vs bare')).toBe('1.00×');
    expect(at(3, 'throughput vs bare')).toBe('0.45×');
    expect(at(3, 'Result')).toBe('');
  });

  it('fail the replica below the target or with a non-200 answer', () => {
    const others = { local: [round(90)], bare: [round(100)], gateway: [round(50)] };
    const slow = throughputRows({ replica: [round(60)], ...others });
    expect(slow[0]?.[THROUGHPUT_COLUMNS.indexOf('Result')]).toBe('FAIL');
    const failing = throughputRows({ replica: [round(90, 1)], ...others });
    expect(failing[0]?.[THROUGHPUT_COLUMNS.indexOf('Result')]).toBe('FAIL');
  });
});

describe('heapFigures', () => {
  it('reads the V8 heap figures of prom-client default metrics', () => {
    const exposition = [
      '# HELP nodejs_heap_size_total_bytes Process heap size from Node.js in bytes.',
      'nodejs_heap_size_total_bytes 169738240',
      'nodejs_heap_size_used_bytes 1.15e+8',
      'nodejs_heap_space_size_total_bytes{space="new"} 66060288',
      'nodejs_heap_space_size_total_bytes{space="large_object"} 35545088',
      'nodejs_heap_space_size_total_bytes{space="old"} 49283072',
    ].join('\n');
    expect(heapFigures(exposition)).toEqual({
      total: 169_738_240,
      used: 115_000_000,
      newSpace: 66_060_288,
      largeObjects: 35_545_088,
    });
    expect(Number.isNaN(heapFigures('').total)).toBe(true);
  });
});

describe('affinityMask', () => {
  it('reads the mask taskset -p prints', () => {
    expect(affinityMask("pid 4242's current affinity mask: 3\n")).toBe('3');
    expect(affinityMask("pid 1's current affinity mask: ff,ffffffff")).toBe('ff,ffffffff');
    expect(affinityMask('taskset: failed')).toBeNull();
  });
});

describe('outcomeSummary', () => {
  it('counts the uploads still being read and the answers by status', () => {
    const outcomes = [
      'held' as const,
      { answered: 503 },
      { answered: 401 },
      { answered: 503 },
      'held' as const,
    ];
    expect(outcomeSummary(outcomes)).toBe('2 read, still open when closed, 1 × 401, 2 × 503');
    expect(outcomeSummary([{ answered: 401 }])).toBe('1 × 401');
  });
});
