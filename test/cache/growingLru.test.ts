import { LRUCache } from 'lru-cache';
import { describe, expect, it, vi } from 'vitest';
import { growingLru } from '../../src/cache/growingLru.ts';

describe('growingLru', () => {
  it('keeps at most maxEntries, dropping the least recently used first', () => {
    const lru = growingLru<string, number>({ maxEntries: 3 });
    for (const [i, key] of ['a', 'b', 'c'].entries()) lru.set(key, i);
    expect(lru.get('a')).toBe(0); // a is now the most recently used
    lru.set('d', 3);
    expect([...lru.keys()].sort()).toEqual(['a', 'c', 'd']);
    lru.set('e', 4);
    expect(lru.size).toBe(3);
    expect(lru.has('c')).toBe(false);
  });

  it('replacing a key does not count it twice', () => {
    const lru = growingLru<string, number>({ maxEntries: 2 });
    lru.set('a', 1);
    lru.set('a', 2);
    lru.set('b', 3);
    expect(lru.get('a')).toBe(2);
    expect(lru.size).toBe(2);
  });

  it('passes the other options through (a TTL)', () => {
    vi.useFakeTimers();
    try {
      const lru = growingLru<string, number>({ maxEntries: 10, ttl: 1_000, perf: { now: () => Date.now() } });
      lru.set('a', 1);
      vi.advanceTimersByTime(1_001);
      expect(lru.get('a')).toBeUndefined();
    } finally {
      vi.useRealTimers();
    }
  });

  it('allocates nothing per entry it does not hold, unlike lru-cache with `max`', () => {
    const heapGrowth = (make: () => unknown) => {
      const before = process.memoryUsage().heapUsed;
      const kept = Array.from({ length: 10 }, make);
      const grown = process.memoryUsage().heapUsed - before;
      expect(kept).toHaveLength(10);
      return grown;
    };
    const preallocated = heapGrowth(() => new LRUCache<string, number>({ max: 50_000, ttl: 60_000 }));
    const growing = heapGrowth(() => {
      const lru = growingLru<string, number>({ maxEntries: 50_000, ttl: 60_000 });
      lru.set('a', 1);
      return lru;
    });
    expect(preallocated).toBeGreaterThan(10 * 1024 * 1024);
    expect(growing).toBeLessThan(preallocated / 20);
  });
});
