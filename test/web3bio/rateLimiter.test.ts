import { describe, expect, it } from 'vitest';
import { ConcurrencyLimit, SlidingWindowLimiter } from '../../src/web3bio/rateLimiter.ts';

describe('SlidingWindowLimiter', () => {
  it('grants a burst up to the limit at once, then spaces the rest by the window', async () => {
    const limiter = new SlidingWindowLimiter({ requests: 3, intervalMs: 60 });
    const start = performance.now();
    const grantedAt: number[] = [];
    await Promise.all(
      Array.from({ length: 7 }, () =>
        limiter.acquire().then(() => grantedAt.push(performance.now() - start)),
      ),
    );
    grantedAt.sort((a, b) => a - b);
    expect(grantedAt.slice(0, 3).every((t) => t < 30)).toBe(true);
    // In any window of 60 ms at most 3 grants (timers may fire a little late, never early).
    for (let i = 3; i < grantedAt.length; i++) {
      expect((grantedAt[i] ?? 0) - (grantedAt[i - 3] ?? 0)).toBeGreaterThanOrEqual(58);
    }
    expect(grantedAt[6]).toBeGreaterThanOrEqual(118);
  });

  it('serves waiters first come, first served', async () => {
    const limiter = new SlidingWindowLimiter({ requests: 1, intervalMs: 10 });
    const order: number[] = [];
    await Promise.all([0, 1, 2, 3].map((n) => limiter.acquire().then(() => order.push(n))));
    expect(order).toEqual([0, 1, 2, 3]);
  });

  it('grants a new burst once the window has passed', async () => {
    const limiter = new SlidingWindowLimiter({ requests: 2, intervalMs: 40 });
    await Promise.all([limiter.acquire(), limiter.acquire(), limiter.acquire()]);
    const start = performance.now();
    await Promise.all([limiter.acquire(), limiter.acquire()]);
    // The third grant opened a window; the next two share the slot freed by the first two.
    expect(performance.now() - start).toBeLessThan(200);
    expect(limiter.pending).toBe(0);
  });

  it('drops an aborted waiter from the queue and rejects it with the reason', async () => {
    const limiter = new SlidingWindowLimiter({ requests: 1, intervalMs: 50 });
    await limiter.acquire();
    const controller = new AbortController();
    const waiting = limiter.acquire(controller.signal);
    controller.abort(new Error('gone'));
    await expect(waiting).rejects.toThrow('gone');
    expect(limiter.pending).toBe(0);
  });

  it('rejects queued waiters on close', async () => {
    const limiter = new SlidingWindowLimiter({ requests: 1, intervalMs: 10_000 });
    await limiter.acquire();
    const waiting = limiter.acquire();
    limiter.close(new Error('closed'));
    await expect(waiting).rejects.toThrow('closed');
  });

  it('refuses a nonsensical limit', () => {
    expect(() => new SlidingWindowLimiter({ requests: 0, intervalMs: 10 })).toThrow(RangeError);
    expect(() => new SlidingWindowLimiter({ requests: 1, intervalMs: 0 })).toThrow(RangeError);
  });
});

describe('ConcurrencyLimit', () => {
  it('never lets more than max holders in', async () => {
    const limit = new ConcurrencyLimit(2);
    let inside = 0;
    let peak = 0;
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        const release = await limit.acquire();
        inside++;
        peak = Math.max(peak, inside);
        await new Promise((resolve) => setImmediate(resolve));
        inside--;
        release();
      }),
    );
    expect(peak).toBe(2);
    expect(limit.active).toBe(0);
  });

  it('ignores a second release and lets an aborted waiter go', async () => {
    const limit = new ConcurrencyLimit(1);
    const release = await limit.acquire();
    const controller = new AbortController();
    const waiting = limit.acquire(controller.signal);
    controller.abort(new Error('gone'));
    await expect(waiting).rejects.toThrow('gone');
    release();
    release();
    expect(limit.active).toBe(0);
    const again = await limit.acquire();
    expect(limit.active).toBe(1);
    again();
  });
});
