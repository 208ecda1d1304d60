import { afterAll, describe, expect, it, vi } from 'vitest';
import type { StoredEntry } from '../../src/cache/types.ts';
import { memoryHarness, redisHarness, type StoreHarness } from './storeHarness.ts';

const entry = (value: unknown, negative = false): StoredEntry => ({
  value,
  negative,
  fetchedAt: 1_700_000_000_000,
  expiresAt: 1_700_000_060_000,
});

describe.each([memoryHarness(), redisHarness()])('CacheStore contract: $name', (harness: StoreHarness) => {
  afterAll(() => harness.cleanup());

  it('returns undefined for a missing key', async () => {
    expect(await harness.create().get('missing')).toBeUndefined();
  });

  it('round-trips JSON-safe entries, positive and negative', async () => {
    const store = harness.create();
    const profile = {
      identity: 'vitalik.eth',
      links: { twitter: { handle: 'VitalikButerin' } },
      tags: ['a'],
      n: null,
    };
    await store.set('p', entry(profile), 60_000);
    await store.set('n', entry({ identity: 'nobody.eth' }, true), 60_000);
    expect(await store.get('p')).toEqual(entry(profile));
    expect(await store.get('n')).toEqual(entry({ identity: 'nobody.eth' }, true));
  });

  it('overwrites and deletes', async () => {
    const store = harness.create();
    await store.set('k', entry('one'), 60_000);
    await store.set('k', entry('two'), 60_000);
    expect((await store.get('k'))?.value).toBe('two');
    await store.delete('k');
    expect(await store.get('k')).toBeUndefined();
    await store.delete('never-set');
  });

  it('keeps an entry no longer than retainMs', async () => {
    const store = harness.create();
    await store.set('short', entry('brief'), 40);
    await store.set('long', entry('kept'), 60_000);
    await vi.waitFor(async () => expect(await store.get('short')).toBeUndefined(), {
      timeout: 2_000,
      interval: 10,
    });
    expect((await store.get('long'))?.value).toBe('kept');
  });

  it('does not keep an entry with a non-positive retention', async () => {
    const store = harness.create();
    await store.set('z', entry('old'), 60_000);
    await store.set('z', entry('new'), 0);
    expect(await store.get('z')).toBeUndefined();
  });

  it('keeps stores with different prefixes or instances apart', async () => {
    const a = harness.create();
    const b = harness.create();
    await a.set('same', entry('a'), 60_000);
    expect(await b.get('same')).toBeUndefined();
  });
});
