/**
 * Deadlines of one length on one timer (the signed routes' body timeout): each expires at its own time,
 * not before, and one removed in time never does; with real timers, as the body reader runs them.
 */
import { describe, expect, it } from 'vitest';
import { type Deadline, DeadlineQueue } from '../../src/discord/deadlineQueue.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `done` holds (a loaded machine may run timers late; this never waits less than needed). */
async function until(done: () => boolean, timeoutMs = 5_000): Promise<void> {
  const end = performance.now() + timeoutMs;
  while (!done()) {
    if (performance.now() > end) throw new Error('not within 5 s');
    await sleep(10);
  }
}

/** A deadline that records when it expired (performance.now()), and when it was added. */
function recorded(): Deadline & { addedAt: number; expiredAt: number[] } {
  const entry = {
    at: 0,
    addedAt: 0,
    expiredAt: [] as number[],
    expire: () => void entry.expiredAt.push(performance.now()),
  };
  return entry;
}

function add(queue: DeadlineQueue, entry: ReturnType<typeof recorded>): void {
  entry.addedAt = performance.now();
  queue.add(entry);
}

describe('DeadlineQueue', () => {
  it('expires each entry once, no sooner than its own time, and the next after the first was removed', async () => {
    const queue = new DeadlineQueue(120);
    const first = recorded();
    const second = recorded();
    add(queue, first);
    await sleep(60);
    add(queue, second);
    // The timer was armed for the first: the second, due 60 ms later, must still come.
    await until(() => second.expiredAt.length > 0);
    expect(first.expiredAt).toHaveLength(1);
    expect(second.expiredAt).toHaveLength(1);
    expect((first.expiredAt[0] ?? 0) - first.addedAt).toBeGreaterThanOrEqual(119);
    expect((second.expiredAt[0] ?? 0) - second.addedAt).toBeGreaterThanOrEqual(119);
    expect(first.expiredAt[0] ?? 0).toBeLessThan(second.expiredAt[0] ?? 0);
    expect(queue.size).toBe(0);
  });

  it('never expires an entry removed in time, and still expires the one after it', async () => {
    const queue = new DeadlineQueue(80);
    const removed = recorded();
    const kept = recorded();
    add(queue, removed);
    await sleep(20);
    add(queue, kept);
    queue.delete(removed);
    await until(() => kept.expiredAt.length > 0);
    await sleep(100);
    expect(removed.expiredAt).toHaveLength(0);
    expect(kept.expiredAt).toHaveLength(1);
  });

  it('an entry added while others expire is timed from its own start', async () => {
    const queue = new DeadlineQueue(60);
    const late = recorded();
    const first: Deadline = {
      at: 0,
      expire: () => add(queue, late),
    };
    queue.add(first);
    await until(() => late.expiredAt.length > 0);
    expect((late.expiredAt[0] ?? 0) - late.addedAt).toBeGreaterThanOrEqual(59);
  });
});
