/**
 * A credential read in a re-check cycle (issue #37), against the stand-in Web3.bio through the real client
 * and its cache: the cycle's first read takes no cached answer from before the cycle (whatever the TTL),
 * another server's check in the cycle is taken instead of a request ("not found" as "not found"), and an
 * answer a link already had never counts again.
 */
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { gatingCredentials } from '../../fakes/web3bio/builders.ts';
import { type FakeWeb3Bio, startFakeWeb3Bio } from '../../fakes/web3bio/server.ts';
import { type PassCycle, readCredentials } from '../../src/gating/rules/cycleReads.ts';
import type { LinkRecord } from '../../src/store/types.ts';
import { Web3BioClient } from '../../src/web3bio/client.ts';

const DAY = 86_400_000;
const HUMAN = gatingCredentials('alice.eth', { human: true });
const NONE = { isHuman: [], isRisky: [], isSpam: [] };

let web3: FakeWeb3Bio;
let web3bio: Web3BioClient;
const logger = pino({ level: 'silent' });

beforeEach(async () => {
  web3 = await startFakeWeb3Bio({ seed: false });
  web3.world.setCredentials('alice.eth', HUMAN);
  // A cache that would keep an answer for a day.
  web3bio = new Web3BioClient({
    baseUrl: web3.url,
    rateLimit: null,
    retry: { retries: 0, baseDelayMs: 5, maxDelayMs: 10 },
    ttl: { credential: DAY },
  });
});

afterEach(async () => {
  await web3bio.close();
  await web3.close();
});

const requests = () => web3.requests.filter((r) => r.path.startsWith('/credential/')).length;

function link(over: Partial<LinkRecord> = {}): LinkRecord {
  return {
    guildId: 'g1',
    userId: 'u1',
    identity: 'alice.eth',
    platform: 'ens',
    address: null,
    proofMethod: 'record',
    provenAt: 1,
    lastCheckAt: null,
    lastCheckOk: null,
    lastResult: null,
    releasedAt: null,
    ...over,
  };
}

function cycle(startedAt: number, checks = new Map()): PassCycle {
  return {
    startedAt,
    counts: { upstreamRequests: 0, reusedChecks: 0, passes: 1, passMs: 0 },
    checks: Promise.resolve(checks),
  };
}

describe('readCredentials in a re-check cycle', () => {
  it('takes no cached answer from before the cycle, though the cache would keep it a day', async () => {
    const deps = { web3bio, logger, now: Date.now() };
    await readCredentials(deps, link(), false, undefined);
    web3.world.setCredentials('alice.eth', NONE);
    // Outside a cycle, a pass takes the cached answer; the cycle that began after it reads again.
    expect((await readCredentials(deps, link(), false, undefined)).credentials?.isHuman).toHaveLength(1);
    expect(requests()).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const c = cycle(Date.now() - 1);
    const read = await readCredentials({ ...deps, now: Date.now() }, link(), false, c);
    expect([read.seen, read.credentials?.isHuman]).toEqual(['answer', []]);
    expect([requests(), c.counts.upstreamRequests]).toEqual([2, 1]);
  });

  it('takes another server’s check in the cycle instead of a request, a "not found" as "not found"', async () => {
    const now = Date.now();
    const answered = cycle(
      now - 1_000,
      new Map([['alice.eth', { at: now - 500, result: NONE, notFound: false }]]),
    );
    expect(await readCredentials({ web3bio, logger, now }, link(), false, answered)).toEqual({
      credentials: NONE,
      seen: 'answer',
      at: now - 500,
    });
    const missing = cycle(
      now - 1_000,
      new Map([['alice.eth', { at: now - 500, result: NONE, notFound: true }]]),
    );
    const known = link({ lastCheckAt: now - 2_000, lastResult: HUMAN as never });
    expect((await readCredentials({ web3bio, logger, now }, known, false, missing)).seen).toBe('not_found');
    expect(requests()).toBe(0);
    expect([answered.counts.reusedChecks, missing.counts.reusedChecks]).toEqual([1, 1]);
  });

  it('never gives a link an answer it already had: its second pass in the cycle reads (through the cache)', async () => {
    const now = Date.now();
    const same = cycle(
      now - 1_000,
      new Map([['alice.eth', { at: now - 500, result: NONE, notFound: false }]]),
    );
    const checked = link({ lastCheckAt: now - 500, lastResult: NONE });
    const read = await readCredentials({ web3bio, logger, now }, checked, false, same);
    expect(read.seen).toBe('answer');
    expect(read.credentials?.isHuman).toHaveLength(1);
    expect([requests(), same.counts.upstreamRequests, same.counts.reusedChecks]).toEqual([1, 1, 0]);
  });
});
