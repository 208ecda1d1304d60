/**
 * The deferral window: an answer not ready within `deferAfterMs` is deferred first. The deadlines of one
 * length share one timer; these check it keeps each interaction's own deadline. `deferred` proves the
 * deferral came before the work ended; the lower bounds, that it did not come early.
 */
import { describe, expect, it } from 'vitest';
import { withinDeferWindow } from '../../src/discord/answerTiming.ts';
import type { Responder } from '../../src/discord/responder.ts';
import type { MessagePayload } from '../../src/render/types.ts';

const payload: MessagePayload = { embeds: [], components: [], allowed_mentions: { parse: [] } };
const later = (ms: number) => new Promise<MessagePayload>((resolve) => setTimeout(resolve, ms, payload));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs one answer; when it was deferred, ms after its start. */
async function timed(work: Promise<MessagePayload>, deferAfterMs: number, answered = false) {
  const started = performance.now();
  let deferredAt: number | undefined;
  const result = await withinDeferWindow(
    { answered } as Responder,
    work,
    async () => {
      deferredAt = performance.now() - started;
    },
    deferAfterMs,
  );
  return { ...result, deferredAt };
}

describe('withinDeferWindow', () => {
  it('answers a quick lookup without deferring, and defers a slow one once its window has passed', async () => {
    const quick = await timed(later(5), 120);
    expect(quick).toMatchObject({ deferred: false, deferredAt: undefined, outcome: { ok: true } });
    const slow = await timed(later(200), 60);
    expect(slow.deferred).toBe(true);
    expect(slow.outcome).toEqual({ ok: true, payload });
    expect(slow.deferredAt).toBeGreaterThanOrEqual(55);
  });

  it('keeps each deadline its own among many: quick answers before and beside it change nothing', async () => {
    const first = Array.from({ length: 50 }, () => timed(later(1), 80));
    await sleep(40);
    // Started 40 ms after the others: its window ends 40 ms after theirs (when the shared timer first fires).
    const slow = timed(later(300), 80);
    const beside = Array.from({ length: 50 }, (_, i) => timed(later(i % 5), 80));
    for (const quick of await Promise.all([...first, ...beside])) expect(quick.deferred).toBe(false);
    const { deferred, deferredAt } = await slow;
    expect(deferred).toBe(true);
    expect(deferredAt).toBeGreaterThanOrEqual(75);
  });

  it('windows of different lengths do not wait for each other', async () => {
    // Deferred at all: the short window did not wait for the long one's deadline (after its work ended).
    const [long, short] = await Promise.all([timed(later(450), 300), timed(later(250), 40)]);
    expect(short.deferred).toBe(true);
    expect(long.deferred).toBe(true);
    expect(long.deferredAt).toBeGreaterThanOrEqual(295);
  });

  it('an error is an outcome, and an interaction already deferred is not deferred again', async () => {
    const failed = await timed(Promise.reject(new Error('upstream')), 50);
    expect(failed.outcome.ok).toBe(false);
    expect(failed.deferred).toBe(false);
    const handedOver = await timed(later(100), 10, true);
    expect(handedOver).toMatchObject({ deferred: true, deferredAt: undefined, outcome: { ok: true } });
  });
});
