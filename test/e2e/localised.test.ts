/**
 * Localised replies end to end: members whose Discord runs in German or Japanese get `/whois`, its
 * select and its errors in their language, through the stand-in Discord and the real bot.
 */
import type { APIEmbed } from 'discord-api-types/v10';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeMessage } from '../../fakes/discord/server.ts';
import { type Harness, startHarness, visibleMessage } from './harness.ts';

function firstEmbed(message: FakeMessage): APIEmbed {
  const embed = message.embeds[0];
  if (!embed) throw new Error(`message ${message.id} has no embed`);
  return embed;
}

function fieldNames(message: FakeMessage): string[] {
  return firstEmbed(message).fields?.map((field) => field.name) ?? [];
}

function select(message: FakeMessage): { custom_id: string; placeholder?: string } {
  const row = message.components?.[0] as { components?: { custom_id: string; placeholder?: string }[] };
  const menu = row?.components?.[0];
  if (!menu) throw new Error(`message ${message.id} has no select menu`);
  return menu;
}

describe('localised lookup replies', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h.close();
  });

  it('a German member’s /whois comes back in German', async () => {
    const reply = visibleMessage(
      await h.run('whois', { identity: 'vitalik.eth' }, { userId: h.newUser(), locale: 'de' }),
    );
    expect(fieldNames(reply)).toEqual(expect.arrayContaining(['Adresse', 'Follower', 'Folgt', 'Links']));
    expect(firstEmbed(reply).footer?.text).toBe('Web3.bio · Profil 1 von 3');
    expect(select(reply).placeholder).toBe('Andere Plattform anzeigen');
    expect(firstEmbed(reply).fields?.find((f) => f.name === 'Follower')?.value).toBe('5.360');
  });

  it('a Japanese member’s /whois comes back in Japanese, and so does their click on the select', async () => {
    const userId = h.newUser();
    const reply = visibleMessage(await h.run('whois', { identity: 'vitalik.eth' }, { userId, locale: 'ja' }));
    expect(fieldNames(reply)).toEqual(expect.arrayContaining(['アドレス', 'フォロワー', 'フォロー中']));
    expect(firstEmbed(reply).footer?.text).toBe('Web3.bio · プロフィール 1/3');
    expect(select(reply).placeholder).toBe('別のプラットフォームを表示');
    const click = await h.click(reply, select(reply).custom_id, ['1'], { userId, locale: 'ja' });
    expect(firstEmbed(visibleMessage(click)).footer?.text).toBe('Web3.bio · プロフィール 2/3');
  });

  it('errors come back in the member’s language, English stays the default', async () => {
    const german = visibleMessage(
      await h.run('whois', { identity: 'not an identity!' }, { userId: h.newUser(), locale: 'de' }),
    );
    expect(firstEmbed(german).title).toBe('❓ Keine Web3-Identität');
    const english = visibleMessage(
      await h.run('whois', { identity: 'not an identity!' }, { userId: h.newUser() }),
    );
    expect(firstEmbed(english).title).toBe('❓ Not a web3 identity');
  });
});
