/**
 * The dashboard's upstream health: the process's own Web3.bio metrics, sampled into the store's minutes
 * (what changed since the last sample), errors being 5xx, 429, timeouts and network failures.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isUpstreamError, UpstreamHealthSampler } from '../../src/app/upstreamHealth.ts';
import { createMetrics } from '../../src/ops/metrics.ts';
import { openSqliteStore } from '../../src/store/sqliteStore.ts';
import type { GatingStore } from '../../src/store/types.ts';
import { silentLogger } from '../gating/serviceHarness.ts';

let store: GatingStore;
beforeEach(async () => {
  store = await openSqliteStore(':memory:');
});
afterEach(async () => {
  await store.close();
});

describe('upstream health sampling', () => {
  it('counts 5xx, 429, timeouts and network failures as errors, not a 404', () => {
    expect(['500', '503', '429', 'timeout', 'network'].every(isUpstreamError)).toBe(true);
    expect(['200', '404', '400', 'aborted', ''].some(isUpstreamError)).toBe(false);
  });

  it('adds what changed since the last sample to the minute, and nothing when nothing did', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    const now = { t: 1_000 * 60_000 };
    const sampler = new UpstreamHealthSampler({ metrics, store, logger: silentLogger, now: () => now.t });
    metrics.upstreamRequests.inc({ endpoint: 'profile', status: '200' }, 5);
    await sampler.sample();
    metrics.upstreamRequests.inc({ endpoint: 'profile', status: '200' }, 3);
    metrics.upstreamRequests.inc({ endpoint: 'credential', status: '503' });
    metrics.upstreamRequests.inc({ endpoint: 'credential', status: 'timeout' });
    metrics.upstreamSeconds.observe({ endpoint: 'profile' }, 0.2);
    metrics.upstreamSeconds.observe({ endpoint: 'credential' }, 2.5);
    now.t += 60_000;
    await sampler.sample();
    await sampler.sample();
    expect(await store.upstreamSince(1_000)).toEqual({ requests: 10, errors: 2, seconds: 2.7, slow: 1 });
    expect(await store.upstreamSince(1_001)).toEqual({ requests: 5, errors: 2, seconds: 2.7, slow: 1 });
  });
});
