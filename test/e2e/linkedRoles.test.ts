/**
 * Linked Roles (issue #8, section 2) end to end: the real bot with LINKED_ROLES_ENABLED, its verify
 * server at PUBLIC_URL/linked-role and the stand-in Discord's OAuth2 and role-connection routes. The
 * guild never runs `/gating setup` (role mode off) and no role is edited: Discord enforces the roles.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ROLE_CONNECTION_METADATA } from '../../src/gating/linkedRoles.ts';
import { gatingCredentials } from '../fakes/web3bio/builders.ts';
import { TestBrowser } from '../gating/signInBrowser.ts';
import { addIdentity, closeGating, type GatingHarness, PUBLIC_URL, startGating } from './gatingHarness.ts';
import { ALICE, visibleMessage } from './harness.ts';

afterEach(closeGating);

const LINKED_ENV = {
  DISCORD_CLIENT_SECRET: 'test-client-secret',
  LINKED_ROLES_ENABLED: 'true',
  TOKEN_ENCRYPTION_KEY: 'ef'.repeat(32),
};

function browser(g: GatingHarness): TestBrowser {
  return new TestBrowser((url) =>
    url.startsWith(PUBLIC_URL) ? url.replace(PUBLIC_URL, g.gating.verifyUrl) : url,
  );
}

describe('Linked Roles through the bot', () => {
  it.each([
    ['with role gating on', 'true'],
    ['alone: role gating off, no GuildMembers intent, no Manage Roles', 'false'],
  ])(
    '%s: a connection is written, updated by a re-check when the credential changes, and cleared by /unverify',
    async (_mode, gatingEnabled) => {
      const g = await startGating({ env: { ...LINKED_ENV, GATING_ENABLED: gatingEnabled } });
      if (gatingEnabled === 'false') {
        expect(g.h.bot.client.options.intents.has('GuildMembers')).toBe(false);
        const registered = (await g.h.discord.state.commands.global).map((c) => c.name);
        expect(registered).not.toContain('gating');
      }
      const oauth = g.h.discord.oauth;
      Object.assign(oauth, { roleConnectionMetadata: ROLE_CONNECTION_METADATA });
      oauth.allowRedirect(`${PUBLIC_URL}/linked-role/callback`);
      oauth.signInAs(ALICE);
      const name = `linked${Date.now().toString(36)}.eth`;
      addIdentity(g, name, { discordHandle: 'alice', human: true });

      const b = browser(g);
      const form = await b.open(`${PUBLIC_URL}/linked-role`);
      expect(form.status).toBe(200);
      expect(form.text).toContain('@alice');
      const proved = await b.open(`${PUBLIC_URL}/linked-role/prove`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ identity: name }).toString(),
      });
      expect(proved.status).toBe(200);
      expect(oauth.roleConnections.get(ALICE)).toMatchObject({
        platform_name: 'Web3.bio',
        platform_username: name,
        metadata: { likely_human: '1', not_spam: '1' },
      });

      const whoami = JSON.stringify(visibleMessage(await g.h.run('whoami', {}, { userId: ALICE })));
      expect(whoami).toContain(`Connected as **${name}**`);

      g.h.upstream.world.setCredentials(name, gatingCredentials(name, { human: true, spam: true }));
      expect(await g.gating.service.linkedRoles?.recheckAll()).toMatchObject({ written: 1 });
      expect(oauth.roleConnections.get(ALICE)?.metadata).toMatchObject({ not_spam: '0' });

      const reply = visibleMessage(await g.h.run('unverify', {}, { userId: ALICE }));
      expect(JSON.stringify(reply)).toContain('Linked Roles connection was cleared');
      expect(oauth.roleConnections.get(ALICE)).toEqual({
        platform_name: null,
        platform_username: null,
        metadata: {},
      });
      expect(await g.gating.store.getRoleConnection(ALICE)).toBeUndefined();
      const roleEdits = g.h.discord.requests.filter((r) => /\/members\/\d+\/roles\//.test(r.path));
      expect(roleEdits).toEqual([]);
    },
  );
});
