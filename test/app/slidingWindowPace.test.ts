import { describe, expect, it } from 'vitest';
import { SlidingWindowPace } from '../../src/app/slidingWindowPace.ts';

describe('SlidingWindowPace (the REST proxy’s global limit)', () => {
  it('lets `limit` start at once, then each next one when the oldest start leaves the window', async () => {
    const pace = new SlidingWindowPace(3, 300);
    const started = Date.now();
    const at: number[] = [];
    await Promise.all(Array.from({ length: 5 }, () => pace.take().then(() => at.push(Date.now() - started))));
    expect(at.slice(0, 3).every((ms) => ms < 100)).toBe(true);
    expect(at[3]).toBeGreaterThanOrEqual(295);
    expect(at[4]).toBeGreaterThanOrEqual(295);
    // Any 300 ms holds at most 3 starts.
    for (const first of at)
      expect(at.filter((ms) => ms >= first && ms < first + 295).length).toBeLessThanOrEqual(3);
  });

  it('drops a waiter whose signal aborts, and the next in line still goes', async () => {
    const pace = new SlidingWindowPace(1, 300);
    await pace.take();
    const controller = new AbortController();
    const dropped = pace.take(controller.signal);
    const next = pace.take();
    controller.abort();
    await expect(dropped).rejects.toMatchObject({ name: 'AbortError' });
    const before = Date.now();
    await next;
    expect(Date.now() - before).toBeLessThan(400);
  });
});
