/**
 * The responder's first responses as HTTP answer bodies: a payload shared between answers (deep-frozen,
 * like a cached /whois card) is serialised once, and every body is byte for byte what JSON.stringify
 * makes of the response.
 */
import type { APIInteractionResponse } from 'discord-api-types/v10';
import { describe, expect, it } from 'vitest';
import { messageBody, Responder, responseBytes } from '../../src/discord/responder.ts';
import type { WebhookRest } from '../../src/discord/webhookRest.ts';
import { deepFreeze } from '../../src/render/payload.ts';
import type { MessagePayload } from '../../src/render/types.ts';

const card = (title: string): MessagePayload => ({
  embeds: [{ title, description: 'Quote " backslash \\ and ENS · name' }],
  components: [],
  allowed_mentions: { parse: [] },
});

/** The bodies a responder's first responses would be sent as. */
function answers() {
  const sent: { response: APIInteractionResponse; bytes: Buffer }[] = [];
  const responder = () =>
    new Responder({} as WebhookRest, { id: '1', token: 't', application_id: '2' }, async (response) => {
      sent.push({ response, bytes: responseBytes(response) });
    });
  return { sent, responder };
}

describe('responseBytes', () => {
  it('is JSON.stringify of the response, for shared and fresh payloads alike', async () => {
    const { sent, responder } = answers();
    const shared = deepFreeze(card('shared'));
    await responder().reply(shared, false);
    await responder().reply(shared, true);
    await responder().update(shared);
    await responder().reply(card('fresh'), false);
    await responder().suggest([{ name: 'vitalik.eth', value: 'vitalik.eth' }]);
    expect(sent).toHaveLength(5);
    for (const { response, bytes } of sent) expect(bytes.toString('utf8')).toBe(JSON.stringify(response));
    expect(JSON.parse(sent[1]?.bytes.toString() ?? '').data.flags).toBe(64);
    expect(JSON.parse(sent[2]?.bytes.toString() ?? '').type).toBe(7);
  });

  it('serialises a shared payload once: the same answer again reuses its bytes', async () => {
    const { sent, responder } = answers();
    const shared = deepFreeze(card('shared'));
    await responder().reply(shared, false);
    await responder().reply(shared, false);
    expect(sent[1]?.bytes).toBe(sent[0]?.bytes);
    expect(messageBody(shared)).toBe(messageBody(shared));
    expect(messageBody(shared, true)).not.toBe(messageBody(shared));
    expect(Object.isFrozen(messageBody(shared))).toBe(true);
  });

  it('never reuses what may change: a payload that is not frozen is serialised every time', async () => {
    const { sent, responder } = answers();
    const mutable = card('before');
    await responder().reply(mutable, false);
    mutable.embeds[0] = { title: 'after' };
    await responder().reply(mutable, false);
    expect(JSON.parse(sent[1]?.bytes.toString() ?? '').data.embeds[0].title).toBe('after');
    expect(messageBody(mutable)).not.toBe(messageBody(mutable));
  });
});
