/**
 * The router's answer by state, as createRouter sent it before its steps were split out (issue #34): a
 * success edits a deferred reply or replies (updates, for the clicker's own message); an error is always
 * private, and a public "thinking…" is deleted for a private follow-up. The deferral matches the style.
 */
import { describe, expect, it } from 'vitest';
import { deferral } from '../../src/discord/acknowledge.ts';
import { type AnswerStyle, answer } from '../../src/discord/answer.ts';
import type { Responder } from '../../src/discord/responder.ts';
import { renderError } from '../../src/render/errors.ts';
import type { MessagePayload, RenderContext } from '../../src/render/types.ts';

const render: RenderContext = {
  locale: 'en-US',
  nowSec: 1_700_000_000,
  ipfsGateway: 'https://ipfs.io/ipfs/',
};
const payload: MessagePayload = {
  content: 'pong',
  embeds: [],
  components: [],
  allowed_mentions: { parse: [] },
};
const failure = new Error('boom');
const errorPayload = renderError(failure, render);

/** A responder that records each call with its arguments. */
function recording(): { responder: Responder; calls: unknown[][] } {
  const calls: unknown[][] = [];
  const record =
    (name: string) =>
    async (...args: unknown[]) => {
      calls.push([name, ...args]);
    };
  const names = ['reply', 'editReply', 'update', 'followUp', 'deleteReply', 'defer', 'deferUpdate'];
  const responder = Object.fromEntries(names.map((name) => [name, record(name)])) as unknown as Responder;
  return { responder, calls };
}

async function answered(style: AnswerStyle, ok: boolean, deferred: boolean): Promise<unknown[][]> {
  const { responder, calls } = recording();
  const outcome = ok ? { ok: true as const, payload } : { ok: false as const, error: failure };
  await answer(responder, style, outcome, deferred, render);
  return calls;
}

describe('answer', () => {
  it('sends a success as a reply in its style, an update of the own message, or an edit once deferred', async () => {
    expect(await answered('public', true, false)).toEqual([['reply', payload, false]]);
    expect(await answered('private', true, false)).toEqual([['reply', payload, true]]);
    expect(await answered('update', true, false)).toEqual([['update', payload]]);
    for (const style of ['public', 'private', 'update'] as const)
      expect(await answered(style, true, true)).toEqual([['editReply', payload]]);
  });

  it('sends an error privately: a private reply, the private deferral edited, or a private follow-up', async () => {
    for (const style of ['public', 'private', 'update'] as const)
      expect(await answered(style, false, false)).toEqual([['reply', errorPayload, true]]);
    expect(await answered('private', false, true)).toEqual([['editReply', errorPayload]]);
    expect(await answered('update', false, true)).toEqual([['followUp', errorPayload, true]]);
    expect(await answered('public', false, true)).toEqual([
      ['deleteReply'],
      ['followUp', errorPayload, true],
    ]);
  });
});

describe('deferral', () => {
  it('defers publicly, privately, or as an update to come, as the answer will be sent', async () => {
    const { responder, calls } = recording();
    for (const style of ['public', 'private', 'update'] as const) await deferral(responder, style)();
    expect(calls).toEqual([['defer', false], ['defer', true], ['deferUpdate']]);
  });
});
