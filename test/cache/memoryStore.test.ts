import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createLookupCache } from '../../src/cache/lookupCache.ts';
import {
  DEFAULT_MAX_BYTES,
  DEFAULT_MAX_ENTRIES,
  estimateEntryBytes,
  MemoryStore,
} from '../../src/cache/memoryStore.ts';
import type { StoredEntry } from '../../src/cache/types.ts';

const entry = (value: unknown): StoredEntry => ({ value, negative: false, fetchedAt: 0, expiresAt: 1 });
const POLICY = { ttlMs: 60_000, negativeTtlMs: 0, staleIfErrorMs: 0 };

describe('estimateEntryBytes', () => {
  it('counts key and JSON text at 2 bytes a character plus a fixed overhead', () => {
    const small = estimateEntryBytes('k', entry('x'));
    const bigger = estimateEntryBytes('k', entry('x'.repeat(1_001)));
    expect(bigger - small).toBe(2_000);
    expect(estimateEntryBytes('kk', entry('x')) - small).toBe(2);
    expect(small).toBeGreaterThan(2 * (1 + '"x"'.length));
  });

  it('estimates a real profile above its JSON size and well below a megabyte', () => {
    const text = readFileSync(
      new URL('../fixtures/web3bio/profile-ens-vitalik.json', import.meta.url),
      'utf8',
    );
    const value: unknown = JSON.parse(text);
    const bytes = estimateEntryBytes('profile:ens:vitalik.eth', entry(value));
    expect(bytes).toBeGreaterThan(JSON.stringify(value).length);
    expect(bytes).toBeLessThan(1_000_000);
  });

  it('handles an undefined value and rejects a value JSON cannot encode', () => {
    expect(estimateEntryBytes('k', entry(undefined))).toBeGreaterThan(0);
    expect(() => estimateEntryBytes('k', entry({ big: 1n }))).toThrow(TypeError);
  });
});

describe('MemoryStore bounds', () => {
  it('uses 50_000 entries and 64 MiB by default', () => {
    expect(DEFAULT_MAX_ENTRIES).toBe(50_000);
    expect(DEFAULT_MAX_BYTES).toBe(64 * 1024 * 1024);
  });

  it('stays within maxBytes when given far more, evicting the oldest', async () => {
    const maxBytes = 50_000;
    const store = new MemoryStore({ maxBytes });
    const payload = 'y'.repeat(1_000);
    for (let i = 0; i < 1_000; i++) {
      await store.set(`k${i}`, entry({ i, payload }), 60_000);
      expect(store.calculatedSize).toBeLessThanOrEqual(maxBytes);
    }
    const perEntry = estimateEntryBytes('k999', entry({ i: 999, payload }));
    expect(store.size).toBe(Math.floor(maxBytes / perEntry));
    expect(store.calculatedSize).toBeGreaterThan(maxBytes - 2 * perEntry);
    expect(await store.get('k0')).toBeUndefined();
    expect(await store.get(`k${1_000 - store.size - 1}`)).toBeUndefined();
    expect(await store.get(`k${1_000 - store.size}`)).toBeDefined();
    expect(await store.get('k999')).toBeDefined();
  });

  it('does not keep a single entry larger than maxBytes', async () => {
    const store = new MemoryStore({ maxBytes: 1_000 });
    await store.set('huge', entry('z'.repeat(2_000)), 60_000);
    expect(await store.get('huge')).toBeUndefined();
    expect(store.calculatedSize).toBe(0);
  });

  it('keeps at most maxEntries, dropping the least recently used', async () => {
    const store = new MemoryStore({ maxEntries: 10 });
    for (let i = 0; i < 10; i++) await store.set(`k${i}`, entry(i), 60_000);
    expect(await store.get('k0')).toBeDefined();
    for (let i = 10; i < 19; i++) await store.set(`k${i}`, entry(i), 60_000);
    expect(store.size).toBe(10);
    expect(await store.get('k0')).toBeDefined();
    for (let i = 1; i < 10; i++) expect(await store.get(`k${i}`)).toBeUndefined();
    expect(await store.get('k18')).toBeDefined();

    for (let i = 19; i < 500; i++) await store.set(`k${i}`, entry(i), 60_000);
    expect(store.size).toBe(10);
    expect(await store.get('k489')).toBeUndefined();
    expect(await store.get('k490')).toBeDefined();
  });

  it('empties on close', async () => {
    const store = new MemoryStore();
    await store.set('k', entry(1), 60_000);
    await store.close();
    expect(store.size).toBe(0);
  });

  it('lets a lookup of a non-JSON value succeed uncached, reporting the failed write', async () => {
    const reported: string[] = [];
    const cache = createLookupCache({
      store: new MemoryStore(),
      onStoreError: (_error, operation, key) => reported.push(`${operation} ${key}`),
    });
    expect(await cache.get('k', async () => ({ balance: 1n }), POLICY)).toMatchObject({
      value: { balance: 1n },
    });
    expect(reported).toEqual(['set k']);
  });
});
