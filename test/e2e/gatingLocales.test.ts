/**
 * The gating module speaks the reader's language end to end: replies follow the member's interaction
 * locale, log-channel lines the server's preferred locale.
 */
import { Locale } from 'discord-api-types/v10';
import { afterEach, describe, expect, it } from 'vitest';
import {
  addIdentity,
  closeGating,
  embedOf,
  logChannelMessages,
  seen,
  setup,
  startGating,
  verifyByRecord,
  waitFor,
} from './gatingHarness.ts';
import { ALICE, isEphemeral, visibleMessage } from './harness.ts';

afterEach(closeGating);

describe('gating in the reader’s locale', () => {
  it('/whoami answers in German and in Japanese, names and markup untouched', async () => {
    const g = await startGating();
    await setup(g);
    addIdentity(g, 'alice.eth', { discordHandle: 'alice' });
    await verifyByRecord(g);

    const german = visibleMessage(await g.h.run('whoami', {}, { userId: ALICE, locale: Locale.German }));
    expect(isEphemeral(german)).toBe(true);
    expect(embedOf(german).title).toBe('Deine Web3-Identitäten');
    expect(seen(german)).toContain('1 nachgewiesene Identität auf diesem Server.');
    expect(seen(german)).toContain('alice.eth · ENS');
    expect(seen(german)).toContain('Gesteuerte Rollen: gewünscht vs. vorhanden');
    expect(seen(german)).toContain('**Verified Human**: ✅ gewünscht · vorhanden');

    const japanese = visibleMessage(await g.h.run('whoami', {}, { userId: ALICE, locale: Locale.Japanese }));
    expect(embedOf(japanese).title).toBe('あなたの Web3 アイデンティティ');
    expect(seen(japanese)).toContain('このサーバーで証明済みのアイデンティティ：1 件');
    expect(seen(japanese)).toContain('**Verified Human**: ✅ 対象 · 付与済み');
    expect(seen(japanese)).not.toMatch(/Your web3 identities|proven identity/);
  });

  it('/verify refuses in German; a user locale without a catalog reads English', async () => {
    const g = await startGating();
    await setup(g);
    const refused = visibleMessage(
      await g.h.run('verify', { identity: 'nobody.eth' }, { userId: ALICE, locale: Locale.German }),
    );
    expect(embedOf(refused).title).toBe('❌ Nicht verifiziert');
    const english = visibleMessage(
      await g.h.run('verify', { identity: 'nobody.eth' }, { userId: ALICE, locale: Locale.Greek }),
    );
    expect(embedOf(english).title).toBe('❌ Not verified');
  });

  it('/verify in Japanese and German: a record proof, and a signing link, each in the member’s language', async () => {
    const g = await startGating();
    await setup(g);
    addIdentity(g, 'alice.eth', { discordHandle: 'alice' });
    const proven = visibleMessage(
      await g.h.run('verify', { identity: 'alice.eth' }, { userId: ALICE, locale: Locale.Japanese }),
    );
    expect(embedOf(proven).title).toBe('認証完了');
    expect(seen(proven)).toContain('✅ **alice.eth** をあなたの Discord アカウントにリンクしました');

    addIdentity(g, 'wallet.eth');
    const signing = visibleMessage(
      await g.h.run('verify', { identity: 'wallet.eth' }, { userId: ALICE, locale: Locale.German }),
    );
    expect(isEphemeral(signing)).toBe(true);
    expect(embedOf(signing).title).toBe('✍️ Zum Verifizieren signieren');
    expect(seen(signing)).not.toMatch(/Sign to verify|To prove you own/);
    expect(seen(signing)).toContain('**wallet.eth**');
  });

  it('log-channel lines follow the server’s preferred locale, not the member’s', async () => {
    const g = await startGating({ guild: { preferredLocale: Locale.Japanese } });
    await setup(g);
    addIdentity(g, 'alice.eth', { discordHandle: 'alice' });
    // Alice's own client is German: her reply is German, the moderators' log stays Japanese.
    const reply = visibleMessage(
      await g.h.run('verify', { identity: 'alice.eth' }, { userId: ALICE, locale: Locale.German }),
    );
    await g.gating.service.idle(g.guildId);
    expect(embedOf(reply).title).toBe('Verifiziert');
    await waitFor(() => logChannelMessages(g).length > 0, 'a log-channel line');
    const log = logChannelMessages(g)
      .map((m) => m.content)
      .join('\n');
    expect(log).toContain(`<@${ALICE}> を alice.eth として認証しました（レコード）。`);
    expect(log).not.toContain('Verified <@');
  });
});
