/**
 * Linked Roles (issue #8, section 2) end to end: the real bot with LINKED_ROLES_ENABLED, its verify
 * server at PUBLIC_URL/linked-role and the stand-in Discord's OAuth2 and role-connection routes. The
 * guild never runs `/gating setup` (role mode off) and no role is edited: Discord enforces the roles.
 * A member's deauthorization reaches the bot as Discord's signed webhook event at PUBLIC_URL/discord/events.
 */
import { ed25519 } from '@noble/curves/ed25519';
import { ApplicationWebhookEventType } from 'discord-api-types/v10';
import { afterEach, describe, expect, it } from 'vitest';
import { postEvent, signedHeaders } from '../../fakes/discord/webhookEvents.ts';
import { gatingCredentials } from '../../fakes/web3bio/builders.ts';
import { ROLE_CONNECTION_METADATA } from '../../src/gating/linkedRoles/linkedRoles.ts';
import { TestBrowser } from '../testBrowser.ts';
import {
  addIdentity,
  closeGating,
  type GatingHarness,
  PUBLIC_URL,
  startGating,
  waitFor,
} from './gatingHarness.ts';
import { ALICE, visibleMessage } from './harness.ts';

afterEach(closeGating);

const LINKED_ENV = {
  DISCORD_CLIENT_SECRET: 'test-client-secret',
  LINKED_ROLES_ENABLED: 'true',
  TOKEN_ENCRYPTION_KEY: 'ef'.repeat(32),
};

function browser(g: GatingHarness): TestBrowser {
  return new TestBrowser(PUBLIC_URL, () => g.gating.verifyUrl);
}

/** Alice signs in on the Linked Roles page and proves a fresh identity by its record; returns it. */
async function connectAlice(g: GatingHarness): Promise<string> {
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
  return name;
}

async function whoami(g: GatingHarness): Promise<string> {
  return JSON.stringify(visibleMessage(await g.h.run('whoami', {}, { userId: ALICE })));
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
      const name = await connectAlice(g);
      expect(oauth.roleConnections.get(ALICE)).toMatchObject({
        platform_name: 'Web3.bio',
        platform_username: name,
        metadata: { likely_human: '1', not_spam: '1' },
      });

      expect(await whoami(g)).toContain(`Connected as **${name}**`);

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

describe("a member's deauthorization, through Discord's webhook events", () => {
  const DEAUTHORIZED = ApplicationWebhookEventType.ApplicationDeauthorized;

  it('clears the stored connection at once, with no token refresh; a forged event first deletes nothing', async () => {
    const g = await startGating({ env: { ...LINKED_ENV, GATING_ENABLED: 'false', LOG_LEVEL: 'info' } });
    const events = g.h.discord.webhookEvents;
    const eventsUrl = `${g.gating.verifyUrl}/discord/events`;
    // Discord saves the Webhook Events URL only after the bot answered its signed PING.
    expect(await events.configure(eventsUrl, [DEAUTHORIZED])).toBe(true);
    const name = await connectAlice(g);
    expect(await g.gating.store.getRoleConnection(ALICE)).toBeDefined();

    // An outsider forges Alice's deauthorization, signed with a key of their own.
    const forged = JSON.stringify({
      version: 1,
      application_id: g.h.discord.applicationId,
      type: 1,
      event: { type: DEAUTHORIZED, timestamp: new Date().toISOString(), data: { user: { id: ALICE } } },
    });
    const attacker = ed25519.utils.randomPrivateKey();
    expect((await postEvent(eventsUrl, forged, signedHeaders(attacker, forged))).status).toBe(401);
    expect((await postEvent(eventsUrl, forged, {})).status).toBe(401);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await g.gating.store.getRoleConnection(ALICE)).toMatchObject({ identity: name, staleSince: null });
    expect(g.h.discord.oauth.roleConnections.get(ALICE)?.platform_username).toBe(name);
    expect(await whoami(g)).toContain(`Connected as **${name}**`);

    const tokenCallsBefore = g.h.discord.requests.filter((r) => r.path === '/oauth2/token').length;
    expect(await events.deauthorize(ALICE)).toEqual({ status: 204, body: '' });
    await waitFor(
      () => g.h.logs.some((l) => l.msg?.includes('the member deauthorized the app')),
      'the log line',
    );
    expect(await g.gating.store.getRoleConnection(ALICE)).toBeUndefined();
    const reply = await whoami(g);
    expect(reply).not.toContain(name);
    expect(reply).not.toContain('no longer accepts');
    expect(g.h.discord.requests.filter((r) => r.path === '/oauth2/token')).toHaveLength(tokenCallsBefore);
    const line = g.h.logs.find((l) => l.msg?.includes('the member deauthorized the app'));
    expect(line).toMatchObject({ userId: ALICE });
    expect(JSON.stringify(line)).not.toContain(name);
    const allLogs = JSON.stringify(g.h.logs);
    expect(allLogs).not.toContain(LINKED_ENV.DISCORD_CLIENT_SECRET);
    expect(allLogs).not.toMatch(/fake-access\.|fake-refresh\./);
    expect(events.deliveries).toEqual([
      { type: 'PING', status: 204 },
      { type: DEAUTHORIZED, status: 204 },
    ]);
  });

  it('without DISCORD_PUBLIC_KEY there is no endpoint: Discord would not save the URL', async () => {
    const g = await startGating({ env: { ...LINKED_ENV, DISCORD_PUBLIC_KEY: '' } });
    const events = g.h.discord.webhookEvents;
    expect(await events.configure(`${g.gating.verifyUrl}/discord/events`, [DEAUTHORIZED])).toBe(false);
    expect(events.deliveries).toEqual([{ type: 'PING', status: 404 }]);
  });
});
