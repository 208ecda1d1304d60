import { describe, expect, it } from 'vitest';
import { IntervalScheduler, jitteredDelay } from '../../src/gating/rechecks/scheduler.ts';
import { silentLogger } from './serviceHarness.ts';

describe('jitteredDelay', () => {
  it('stays within interval ± ratio', () => {
    expect(jitteredDelay(1_000, 0.1, () => 0)).toBe(900);
    expect(jitteredDelay(1_000, 0.1, () => 0.5)).toBe(1_000);
    expect(jitteredDelay(1_000, 0.1, () => 0.999_999)).toBe(1_100);
    for (let i = 0; i < 1_000; i += 1) {
      const delay = jitteredDelay(86_400_000, 0.1);
      expect(delay).toBeGreaterThanOrEqual(77_760_000);
      expect(delay).toBeLessThanOrEqual(95_040_000);
    }
  });

  it('clamps odd ratios and never goes negative', () => {
    expect(jitteredDelay(1_000, -1, () => 0)).toBe(1_000);
    expect(jitteredDelay(1_000, 5, () => 0)).toBe(0);
    expect(jitteredDelay(1_000, 5, () => 0.999_999)).toBe(2_000);
  });
});

/** Starts a scheduler and resolves with the start times of its first `runs` runs. */
function collectRuns(scheduler: IntervalScheduler, runs: number, taskMs = 0): Promise<number[]> {
  const starts: number[] = [];
  return new Promise((resolve) => {
    scheduler.start(async () => {
      starts.push(performance.now());
      if (taskMs > 0) await new Promise((r) => setTimeout(r, taskMs));
      if (starts.length === runs) {
        scheduler.stop();
        resolve(starts);
      }
    });
  });
}

describe('IntervalScheduler', () => {
  it('runs repeatedly with waits inside the jitter bounds', async () => {
    let flip = 0;
    const random = () => {
      flip += 1;
      return flip % 2 === 0 ? 0 : 0.999_999;
    };
    const scheduler = new IntervalScheduler({ intervalMs: 40, jitterRatio: 0.5, random });
    const begun = performance.now();
    const starts = await collectRuns(scheduler, 5);
    const gaps = starts.map((at, i) => at - (i === 0 ? begun : (starts[i - 1] ?? begun)));
    for (const [i, gap] of gaps.entries()) {
      // random() alternates between the bottom (20 ms) and the top (60 ms) of the range.
      const wanted = i % 2 === 0 ? 60 : 20;
      expect(gap, `gap ${i}`).toBeGreaterThanOrEqual(wanted - 1);
      expect(gap, `gap ${i}`).toBeLessThan(wanted + 150);
    }
  });

  it('never overlaps runs: the next wait starts when a run ends', async () => {
    const scheduler = new IntervalScheduler({ intervalMs: 5, jitterRatio: 0 });
    let running = 0;
    let most = 0;
    const done = new Promise<void>((resolve) => {
      let runs = 0;
      scheduler.start(async () => {
        running += 1;
        most = Math.max(most, running);
        await new Promise((r) => setTimeout(r, 20));
        running -= 1;
        runs += 1;
        if (runs === 3) {
          scheduler.stop();
          resolve();
        }
      });
    });
    await done;
    expect(most).toBe(1);
  });

  it('keeps going after a failed run, and stops for good on stop()', async () => {
    const scheduler = new IntervalScheduler({ intervalMs: 5, jitterRatio: 0, logger: silentLogger });
    let runs = 0;
    await new Promise<void>((resolve) => {
      scheduler.start(async () => {
        runs += 1;
        if (runs === 3) {
          scheduler.stop();
          resolve();
        }
        throw new Error('upstream down');
      });
    });
    await new Promise((r) => setTimeout(r, 40));
    expect(runs).toBe(3);
  });

  it('waits out intervals longer than a single timer can (30 days) instead of firing at once', async () => {
    const scheduler = new IntervalScheduler({ intervalMs: 30 * 24 * 60 * 60_000, jitterRatio: 0 });
    let ran = false;
    scheduler.start(async () => {
      ran = true;
    });
    await new Promise((r) => setTimeout(r, 30));
    scheduler.stop();
    expect(ran).toBe(false);
  });

  it('ignores a second start and refuses a non-positive interval', async () => {
    expect(() => new IntervalScheduler({ intervalMs: 0 })).toThrow(RangeError);
    expect(() => new IntervalScheduler({ intervalMs: Number.NaN })).toThrow(RangeError);
    const scheduler = new IntervalScheduler({ intervalMs: 50, jitterRatio: 0 });
    let runs = 0;
    const firstRun = new Promise<void>((resolve) => {
      const task = async () => {
        runs += 1;
        resolve();
      };
      scheduler.start(task);
      scheduler.start(task);
    });
    await firstRun;
    // A second timer would have fired within a millisecond or two of the first.
    await new Promise((r) => setTimeout(r, 10));
    scheduler.stop();
    expect(runs).toBe(1);
  });
});
