import type { APIEmbed } from 'discord-api-types/v10';
import { describe, expect, it } from 'vitest';
import { renderCredentials } from '../../src/render/credentials.ts';
import type { CredentialSet } from '../../src/web3bio/types.ts';
import {
  credential,
  ctx,
  emptyCredentialSet,
  fixture,
  HOSTILE,
  NOW_SEC,
  toCredentialSet,
} from './fixtures.ts';
import { assertWithinDiscordLimits } from './limits.ts';

function render(identity: string, set: CredentialSet, context = ctx()): APIEmbed {
  const payload = renderCredentials(identity, set, context);
  assertWithinDiscordLimits(payload);
  expect(payload.components).toEqual([]);
  const embed = payload.embeds[0];
  if (!embed) throw new Error('no embed');
  return embed;
}

const helena = () => toCredentialSet(fixture('credential-ishuman-0xhelena.json') as Record<string, unknown>);
const ggmonster = () =>
  toCredentialSet(fixture('credential-isrisky-isspam-ggmonster.json') as Record<string, unknown>);

describe('renderCredentials', () => {
  it('shows a human verdict with each credential', () => {
    const embed = render('0xhelena.eth', helena());
    expect(embed.title).toBe('Credentials · 0xhelena.eth');
    expect(embed.description?.split('\n')[0]).toContain('Likely human');
    expect(embed.description).toContain('Human: 3 · Risky: 0 · Spam: 0');
    expect(embed.color).toBe(0x57f287);
    expect(embed.fields).toHaveLength(3);
    const [dentity, galxe, passport] = embed.fields ?? [];
    expect(dentity?.name).toBe('✅ Dentity Humanity Verified');
    expect(dentity?.value).toContain('Source: dentity');
    expect(dentity?.value).toContain('Value: **yes**');
    expect(dentity?.value).toContain('Updated <t:1762956888:R> · No expiry');
    expect(galxe?.value).toContain('[Details](https://app.galxe.com/passport)');
    expect(passport?.value).toContain('Score: **47.8**');
  });

  it('ranks spam above risky and lists the spam signal first', () => {
    const embed = render('ggmonster', ggmonster());
    expect(embed.description).toContain('Spam');
    expect(embed.description).toContain('Human: 0 · Risky: 1 · Spam: 1');
    expect(embed.color).toBe(0xed4245);
    expect(embed.fields?.map((f) => f.name)).toEqual(['⛔ Spam', '⚠️ Copyright Violation']);
    expect(embed.fields?.[0]?.value).toContain('Score: **0**');
  });

  it('shows a risky verdict without spam', () => {
    const set = ggmonster();
    set.isSpam = [];
    const embed = render('ggmonster', set);
    expect(embed.description).toContain('Risky');
    expect(embed.color).toBe(0xf0b232);
  });

  it('says there are no signals for an empty set', () => {
    const embed = render('nobody.eth', emptyCredentialSet());
    expect(embed.description).toContain('No signals');
    expect(embed.fields).toEqual([]);
    expect(embed.color).toBe(0x99aab5);
  });

  it('marks expired credentials and does not count them', () => {
    const set: CredentialSet = {
      isHuman: [credential({ label: 'Old proof', expiredAt: NOW_SEC - 3600 })],
      isRisky: [],
      isSpam: [credential({ category: 'isSpam', label: 'Old spam', expiredAt: NOW_SEC - 60 })],
    };
    const embed = render('someone.eth', set);
    expect(embed.description).toContain('No signals');
    expect(embed.description).toContain('Human: 0 · Risky: 0 · Spam: 0 · Expired, not counted: 2');
    expect(embed.fields?.map((f) => f.name)).toEqual(['⌛ Old spam (expired)', '⌛ Old proof (expired)']);
    expect(embed.fields?.[1]?.value).toContain(`**Expired** <t:${NOW_SEC - 3600}:R>`);
  });

  it('lists live signals before expired ones and shows future expiry', () => {
    const set: CredentialSet = {
      isHuman: [
        credential({ label: 'Expired', expiredAt: NOW_SEC - 1 }),
        credential({ label: 'Live', expiredAt: NOW_SEC + 86_400 }),
      ],
      isRisky: [],
      isSpam: [],
    };
    const embed = render('someone.eth', set);
    expect(embed.fields?.map((f) => f.name)).toEqual(['✅ Live', '⌛ Expired (expired)']);
    expect(embed.fields?.[0]?.value).toContain(`Expires <t:${NOW_SEC + 86_400}:R>`);
    expect(embed.description).toContain('Human: 1');
  });

  it('formats scores by locale', () => {
    const set = { ...emptyCredentialSet(), isHuman: [credential({ type: 'score', value: '1234.5678' })] };
    expect(render('x', set, ctx({ locale: 'de' })).fields?.[0]?.value).toContain('Score: **1.234,57**');
    expect(render('x', set, ctx({ locale: 'en-US' })).fields?.[0]?.value).toContain('Score: **1,234.57**');
  });

  it('keeps 40 long hostile credentials within limits and says how many were left out', () => {
    const many = Array.from({ length: 40 }, (_, i) =>
      credential({
        label: `${HOSTILE} ${i}`,
        description: HOSTILE.repeat(20),
        source: HOSTILE,
        value: HOSTILE,
        type: 'weird',
        link: i % 2 ? 'javascript:alert(1)' : 'https://ok.example/x',
        id: HOSTILE,
      }),
    );
    const embed = render(HOSTILE, { isHuman: many, isRisky: [], isSpam: [] });
    expect(embed.fields?.length).toBeLessThanOrEqual(25);
    expect(embed.fields?.at(-1)?.value).toMatch(/^…and \d+ more$/);
    expect(embed.title).toContain('@\u200beveryone');
  });
});
