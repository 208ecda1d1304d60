import { describe, expect, it } from 'vitest';
import { ConcurrencyLimit, SlidingWindowLimiter } from '../../src/web3bio/rateLimiter.ts';

describe('SlidingWindowLimiter', () => {
  it('grants a burst up to the limit at once, then spaces the rest by the window', async () => {
    const limiter = new SlidingWindowLimiter({ requests: 3, intervalMs: 60 });
    const start = performance.now();
    const grantedAt: number[] = [];
    await Promise.all(
      Array.from({ length: 7 }, () =>
        limiter.acquire().then((done) => {
          grantedAt.push(performance.now() - start);
          done();
        }),
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
    await Promise.all(
      [0, 1, 2, 3].map((n) =>
        limiter.acquire().then((done) => {
          order.push(n);
          done();
        }),
      ),
    );
    expect(order).toEqual([0, 1, 2, 3]);
  });

  it('grants a new burst once the window has passed', async () => {
    const limiter = new SlidingWindowLimiter({ requests: 2, intervalMs: 40 });
    const finish = (done: () => void) => done();
    await Promise.all([limiter.acquire(), limiter.acquire(), limiter.acquire()].map((p) => p.then(finish)));
    const start = performance.now();
    await Promise.all([limiter.acquire(), limiter.acquire()].map((p) => p.then(finish)));
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

  it('keeps a slot until the window has passed after the request finished, not after it was sent', async () => {
    let now = 0;
    const limiter = new SlidingWindowLimiter({ requests: 1, intervalMs: 100 }, () => now);
    const first = await limiter.acquire();
    let secondGranted = false;
    const second = limiter.acquire().then((done) => {
      secondGranted = true;
      return done;
    });
    // The first request is slow: 250 ms in flight, longer than the window.
    now = 250;
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(secondGranted).toBe(false);
    first();
    now = 349;
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(secondGranted).toBe(false);
    now = 351;
    (await second)();
    expect(secondGranted).toBe(true);
  });

  it('finishing a request twice frees only one slot', async () => {
    let now = 0;
    const limiter = new SlidingWindowLimiter({ requests: 2, intervalMs: 100 }, () => now);
    const a = await limiter.acquire();
    await limiter.acquire();
    a();
    a();
    now = 101;
    await limiter.acquire();
    let third = false;
    const waiting = limiter.acquire().then(() => {
      third = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(third).toBe(false);
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
