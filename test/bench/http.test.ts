import { describe, expect, it } from 'vitest';
import {
  affinityMask,
  CPU_RATIO_TARGET,
  floorNote,
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

const round = (perSecond: number, failures = 0, cpuMicrosPerRequest = 100): HttpRound => ({
  latency: summarize([1, 2, 3]),
  perSecond,
  requests: 3,
  failures,
  wrong: 0,
  checked: 1,
  cpuMicrosPerRequest,
  ranOut: false,
});

describe('throughput rows', () => {
  it('pair rounds in order and judge the replica against the bare endpoint: 0.7× its throughput, 1.4× its CPU', () => {
    expect(pairedRatio([round(80), round(60)], [round(100), round(100)])).toBeCloseTo(0.7);
    expect(
      pairedRatio(
        [round(80, 0, 150), round(80, 0, 120)],
        [round(100, 0, 100), round(100, 0, 100)],
        'cpuMicrosPerRequest',
      ),
    ).toBeCloseTo(1.35);
    const rows = throughputRows({
      replica: [round(80, 0, 130), round(70, 0, 140)],
      local: [round(90, 0, 120), round(80, 0, 120)],
      floor: [round(95, 0, 110), round(95, 0, 110)],
      bare: [round(100), round(100)],
      gateway: [round(40, 0, 90), round(50, 0, 90)],
    });
    const at = (row: number, column: (typeof THROUGHPUT_COLUMNS)[number]) =>
      rows[row]?.[THROUGHPUT_COLUMNS.indexOf(column)];
    expect(at(0, 'throughput vs bare')).toBe('0.75×');
    expect(at(0, 'server CPU vs bare')).toBe('1.35×');
    expect(at(0, 'Result')).toBe('PASS');
    // The replica without Redis and the floor are shown for comparison, not judged.
    expect(at(1, 'throughput vs bare')).toBe('0.85×');
    expect(at(1, 'server CPU vs bare')).toBe('1.20×');
    expect(at(1, 'Result')).toBe('');
    expect(at(2, 'Case')).toMatch(/^floor/);
    expect(at(2, 'server CPU vs bare')).toBe('1.10×');
    expect(at(2, 'Result')).toBe('');
    expect(at(3, 'throughput vs bare')).toBe('1.00×');
    expect(at(3, 'server CPU vs bare')).toBe('1.00×');
    expect(at(4, 'throughput vs bare')).toBe('0.45×');
    expect(at(4, 'server CPU vs bare')).toBe('0.90×');
    expect(at(4, 'Result')).toBe('');
  });

  it('fail the replica below the throughput target, above the CPU target, or with a non-200 answer', () => {
    const others = { local: [round(90)], floor: [round(95)], bare: [round(100)], gateway: [round(50)] };
    const result = (replica: HttpRound) =>
      throughputRows({ replica: [replica], ...others })[0]?.[THROUGHPUT_COLUMNS.indexOf('Result')];
    expect(result(round(90, 0, 140))).toBe('PASS');
    expect(result(round(60))).toBe('FAIL');
    expect(result(round(90, 0, 141))).toBe('FAIL');
    expect(result(round(90, 1))).toBe('FAIL');
  });

  it('say what the floor leaves the rest of the replica under the CPU target', () => {
    const bare = [round(100, 0, 100)];
    const note = floorNote([round(60, 0, 180)], [round(90, 0, 130)], bare);
    expect(note).toContain('The floor costs 1.30× the bare endpoint');
    expect(note).toContain(`under the ${CPU_RATIO_TARGET}× target that leaves 0.10×`);
    expect(note).toContain('which cost 0.50× here');
    // A floor above the target leaves nothing.
    expect(floorNote([round(60, 0, 200)], [round(90, 0, 150)], bare)).toContain('leaves 0.00× for');
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
