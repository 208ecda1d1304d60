/**
 * Linked Roles played by their attackers (issue #15, the threat model's alt farm): the real bot with
 * LINKED_ROLES_ENABLED against the stand-in Discord (OAuth2, role connections) and Web3.bio. Every move
 * is made through the Linked Roles page, its signing routes, slash commands or the stand-ins' own
 * answers; every outcome is read where it lands: the role connections the stand-in Discord holds,
 * `/whoami`, the page, the requests Discord received. Each runs on SQLite and on PostgreSQL.
 */
import pg from 'pg';
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import { afterEach, describe, expect, it } from 'vitest';
import { ensProfile, gatingCredentials, nextAddress } from '../../fakes/web3bio/builders.ts';
import { ROLE_CONNECTION_METADATA } from '../../src/gating/linkedRoles/linkedRoles.ts';
import { TestBrowser } from '../testBrowser.ts';
import {
  addIdentity,
  addMember,
  closeGating,
  type GatingHarness,
  PUBLIC_URL,
  startGating,
} from './gatingHarness.ts';
import { visibleMessage } from './harness.ts';

const LINKED_ENV = {
  DISCORD_CLIENT_SECRET: 'test-client-secret',
  LINKED_ROLES_ENABLED: 'true',
  TOKEN_ENCRYPTION_KEY: 'cd'.repeat(32),
  // A loss is applied on its second sighting, however soon.
  GATING_CONFIRM_MINUTES: '0',
};
const POSTGRES_ADMIN_URL = 'postgres://postgres@127.0.0.1:5432/test';
const FORM = { 'content-type': 'application/x-www-form-urlencoded' };

function browser(g: GatingHarness): TestBrowser {
  return new TestBrowser(PUBLIC_URL, () => g.gating.verifyUrl);
}

/** `userId` opens the Linked Roles page and signs in with Discord; returns their browser. */
async function signIn(g: GatingHarness, userId: string): Promise<TestBrowser> {
  g.h.discord.oauth.signInAs(userId);
  const b = browser(g);
  const page = await b.open(`${PUBLIC_URL}/linked-role`);
  expect(page.status).toBe(200);
  return b;
}

/** Proves `identity` by its record on the signed-in page. */
function proveRecord(b: TestBrowser, identity: string) {
  return b.open(`${PUBLIC_URL}/linked-role/prove`, {
    method: 'POST',
    headers: FORM,
    body: new URLSearchParams({ identity, proof: 'record' }).toString(),
  });
}

/** Asks for the signing link of `identity`; `sign` then signs its message with `wallet` and posts it. */
async function startSigning(b: TestBrowser, identity: string) {
  const page = await b.open(`${PUBLIC_URL}/linked-role/prove`, {
    method: 'POST',
    headers: FORM,
    body: new URLSearchParams({ identity, proof: 'signature' }).toString(),
  });
  expect(page.url).toMatch(/\/linked-role\/sign\/[0-9a-f]{32}$/);
  return {
    async sign(wallet: PrivateKeyAccount): Promise<{ status: number; body: Record<string, unknown> }> {
      const { message } = JSON.parse((await b.open(`${page.url}/message`)).text) as { message: string };
      const posted = await b.open(page.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ signature: await wallet.signMessage({ message }) }),
      });
      return { status: posted.status, body: JSON.parse(posted.text) as Record<string, unknown> };
    },
  };
}

async function whoami(g: GatingHarness, userId: string): Promise<string> {
  return JSON.stringify(visibleMessage(await g.h.run('whoami', {}, { userId })));
}

/** What the stand-in Discord holds for each account: its metadata key, or undefined. */
function held(g: GatingHarness, ids: string[], key: string): (string | undefined)[] {
  return ids.map((id) => g.h.discord.oauth.roleConnections.get(id)?.metadata[key]);
}

/** Role-connection writes Discord received (any account, any answer). */
function connectionWrites(g: GatingHarness): number {
  return g.h.discord.requests.filter((r) => r.method === 'PUT' && r.path.endsWith('/role-connection')).length;
}

function tokenCalls(g: GatingHarness): number {
  return g.h.discord.requests.filter((r) => r.path === '/oauth2/token').length;
}

describe.each([
  ['SQLite', false],
  ['PostgreSQL', true],
])('Linked Roles attacks (%s)', (_store, postgres) => {
  let dropDatabase: (() => Promise<void>) | undefined;

  afterEach(async () => {
    await closeGating();
    await dropDatabase?.();
    dropDatabase = undefined;
  });

  /** The bot with Linked Roles on (and a database of its own on PostgreSQL). */
  async function start(): Promise<GatingHarness> {
    const env: Record<string, string> = { ...LINKED_ENV };
    if (postgres) {
      const database = `linked_attacks_${process.pid}_${Date.now().toString(36)}`;
      const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
      await admin.connect();
      await admin.query(`CREATE DATABASE ${database}`);
      dropDatabase = async () => {
        await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`);
        await admin.end();
      };
      env.DATABASE_URL = `postgres://postgres@127.0.0.1:5432/${database}`;
    }
    const g = await startGating({ env });
    Object.assign(g.h.discord.oauth, { roleConnectionMetadata: ROLE_CONNECTION_METADATA });
    g.h.discord.oauth.allowRedirect(`${PUBLIC_URL}/linked-role/callback`);
    return g;
  }

  describe('one identity, one Discord account, across the application', () => {
    it('one wallet signed for 4 accounts in turn: only the last keeps likely_human=1; the other 3 are rewritten to 0 and told why', async () => {
      const g = await start();
      const wallet = privateKeyToAccount(generatePrivateKey());
      const address = wallet.address.toLowerCase();
      g.h.upstream.world.setCredentials(address, gatingCredentials(address, { human: true }));
      const alts: string[] = [];
      for (let i = 0; i < 4; i += 1) alts.push(await addMember(g, `walletalt${i}`));

      for (const [i, alt] of alts.entries()) {
        const signing = await startSigning(await signIn(g, alt), address);
        expect(await signing.sign(wallet)).toMatchObject({ status: 200, body: { ok: true } });
        // After each signature exactly one account holds the wallet's humanity.
        expect(held(g, alts.slice(0, i + 1), 'likely_human').filter((v) => v === '1')).toEqual(['1']);
      }
      expect(held(g, alts, 'likely_human')).toEqual(['0', '0', '0', '1']);
      expect(held(g, alts, 'humanity_score')).toEqual(['0', '0', '0', '0']);
      expect(held(g, alts, 'not_spam')).toEqual(['1', '1', '1', '1']);
      // A connection that proves nothing claims no identity and no verified date.
      expect(held(g, alts, 'verified_days').map((v) => v !== undefined)).toEqual([false, false, false, true]);
      expect(g.h.discord.oauth.roleConnections.get(alts[0] ?? '')?.platform_username).toBeNull();

      for (const alt of alts.slice(0, 3)) {
        const text = await whoami(g, alt);
        expect(text).toContain('no longer backs your Linked Roles');
        expect(text).toContain('its wallet signed for another Discord account');
      }
      expect(await whoami(g, alts[3] ?? '')).toContain(`Connected as **${address}**`);
      // The page says it too, above the choice of proof.
      g.h.discord.oauth.signInAs(alts[0] ?? '');
      const page = await browser(g).open(`${PUBLIC_URL}/linked-role`);
      expect(page.text).toContain(
        'no longer backs your roles: its wallet signed for another Discord account',
      );

      // Re-checks keep it that way.
      expect(await g.gating.service.linkedRoles?.recheckAll()).toMatchObject({ written: 0, unchanged: 4 });
      expect(held(g, alts, 'likely_human')).toEqual(['0', '0', '0', '1']);
    });

    it('two accounts racing for one wallet: the first signature wins, the later is refused and told why', async () => {
      const g = await start();
      const wallet = privateKeyToAccount(generatePrivateKey());
      const address = wallet.address.toLowerCase();
      g.h.upstream.world.setCredentials(address, gatingCredentials(address, { human: true }));
      const [early, late] = [await addMember(g, 'raceearly'), await addMember(g, 'racelate')];
      // The early account makes its signing link first, but the late one signs first.
      const earlyLink = await startSigning(await signIn(g, early), address);
      const lateLink = await startSigning(await signIn(g, late), address);
      expect(await lateLink.sign(wallet)).toMatchObject({ status: 200 });
      const refused = await earlyLink.sign(wallet);
      expect(refused).toMatchObject({ status: 409, body: { ok: false, reason: 'raced' } });
      expect(String(refused.body.message)).toContain('another Discord account signed for this wallet after');
      expect(g.h.discord.oauth.roleConnections.has(early)).toBe(false);
      expect(await g.gating.store.getRoleConnection(early)).toBeUndefined();
      expect(held(g, [late], 'likely_human')).toEqual(['1']);
    });

    it('a record proof of a name whose wallet another account signed for is refused with the reason; nothing is written', async () => {
      const g = await start();
      const wallet = privateKeyToAccount(generatePrivateKey());
      const address = wallet.address.toLowerCase();
      g.h.upstream.world.setCredentials(address, gatingCredentials(address, { human: true }));
      const owner = await addMember(g, 'walletowner');
      const squatter = await addMember(g, 'squatter');
      const signing = await startSigning(await signIn(g, owner), address);
      expect(await signing.sign(wallet)).toMatchObject({ status: 200 });

      // A free subname the squatter controls: its record names them and points at the owner's wallet.
      addIdentity(g, 'free.squat.eth', { discordHandle: 'squatter', address, human: true });
      const writes = connectionWrites(g);
      const proved = await proveRecord(await signIn(g, squatter), 'free.squat.eth');
      expect(proved.status).toBe(409);
      expect(proved.text).toContain('resolves to a wallet another Discord account proved by signing');
      expect(proved.text).toContain('nothing was changed');
      expect(connectionWrites(g)).toBe(writes);
      expect(g.h.discord.oauth.roleConnections.has(squatter)).toBe(false);
      expect(await g.gating.store.getRoleConnection(squatter)).toBeUndefined();
      expect(held(g, [owner], 'likely_human')).toEqual(['1']);
      expect(await whoami(g, owner)).toContain(`Connected as **${address}**`);
    });

    it('one name re-pointed alt → alt → alt: each record proof takes it from the last, and re-checks drop a record that stopped naming its account; never more than 1 of 3', async () => {
      const g = await start();
      const name = 'farm.eth';
      const address = nextAddress();
      const alts = [
        await addMember(g, 'farmalt0'),
        await addMember(g, 'farmalt1'),
        await addMember(g, 'farmalt2'),
      ];
      const repoint = (handle: string) => g.h.upstream.world.addProfile(ensProfile(name, address, handle));
      addIdentity(g, name, { address, discordHandle: 'farmalt0', human: true });
      const connected = () => held(g, alts, 'likely_human').filter((v) => v === '1').length;

      for (const [i, alt] of alts.entries()) {
        repoint(`farmalt${i}`);
        const proved = await proveRecord(await signIn(g, alt), name);
        expect(proved.status).toBe(200);
        expect(held(g, alts, 'likely_human')[i]).toBe('1');
        expect(connected()).toBe(1);
        if (i > 0) expect(await whoami(g, alts[i - 1] ?? '')).toContain('another Discord account proved it');
      }
      expect(held(g, alts, 'likely_human')).toEqual(['0', '0', '1']);

      // The record now names an account that never proves it: the last alt keeps nothing once confirmed.
      const last = alts[2] ?? '';
      repoint('someoneelse');
      const service = g.gating.service.linkedRoles;
      expect(await service?.recheckAll()).toMatchObject({ released: 0 });
      expect(held(g, alts, 'likely_human')).toEqual(['0', '0', '1']);
      // A failed lookup, then a sudden "not found", confirm nothing.
      g.h.upstream.addFault({ match: `/profile/ens/${name}`, action: { kind: 'status', status: 503 } });
      g.h.upstream.addFault({ match: `/domain/${name}`, action: { kind: 'status', status: 503 } });
      expect(await service?.recheckAll()).toMatchObject({ released: 0 });
      g.h.upstream.clearFaults();
      g.h.upstream.world.removeProfile('ens', name);
      expect(await service?.recheckAll()).toMatchObject({ released: 0 });
      expect(held(g, alts, 'likely_human')).toEqual(['0', '0', '1']);
      // A real answer without the name again: released and rewritten.
      repoint('someoneelse');
      expect(await service?.recheckAll()).toMatchObject({ released: 1 });
      expect(held(g, alts, 'likely_human')).toEqual(['0', '0', '0']);
      expect(await g.gating.store.getRoleConnection(last)).toMatchObject({ releasedReason: 'record_gone' });
      expect(await whoami(g, last)).toContain('its record no longer names your Discord username');

      // Pointed back at an earlier alt, the name proves nothing for it until that alt proves it again.
      repoint('farmalt0');
      await service?.recheckAll();
      expect(connected()).toBe(0);
      expect((await proveRecord(await signIn(g, alts[0] ?? ''), name)).status).toBe(200);
      expect(held(g, alts, 'likely_human')).toEqual(['1', '0', '0']);
    });
  });

  describe('a flag sticks to the account', () => {
    async function flaggedMember(g: GatingHarness, username: string) {
      const id = await addMember(g, username);
      addIdentity(g, `flagged-${username}.eth`, { discordHandle: username, human: false });
      g.h.upstream.world.setCredentials(
        `flagged-${username}.eth`,
        gatingCredentials(`flagged-${username}.eth`, { human: false, spam: true }),
      );
      addIdentity(g, `clean-${username}.eth`, { discordHandle: username, human: true });
      expect((await proveRecord(await signIn(g, id), `flagged-${username}.eth`)).status).toBe(200);
      expect(held(g, [id], 'not_spam')).toEqual(['0']);
      return { id, flagged: `flagged-${username}.eth`, clean: `clean-${username}.eth` };
    }

    /** The flagged identity's own credentials clear: the next re-check writes not_spam=1, the one after drops the hold. */
    async function clearFlag(g: GatingHarness, m: { id: string; flagged: string }) {
      g.h.upstream.world.setCredentials(m.flagged, gatingCredentials(m.flagged, { human: false }));
      await g.gating.service.linkedRoles?.recheckAll();
      expect(held(g, [m.id], 'not_spam')).toEqual(['1']);
      expect(await g.gating.store.listRoleConnectionHolds(m.id)).not.toEqual([]);
      await g.gating.service.linkedRoles?.recheckAll();
      expect(await g.gating.store.listRoleConnectionHolds(m.id)).toEqual([]);
      expect(held(g, [m.id], 'not_spam')).toEqual(['1']);
    }

    it('a spam-flagged identity, then a clean second one: not_spam stays 0 until the flagged identity itself clears', async () => {
      const g = await start();
      const m = await flaggedMember(g, 'shedder');
      const proved = await proveRecord(await signIn(g, m.id), m.clean);
      expect(proved.status).toBe(200);
      expect(proved.text).toContain('<dt>Not flagged as spam</dt><dd>no</dd>');
      expect(g.h.discord.oauth.roleConnections.get(m.id)).toMatchObject({
        platform_username: m.clean,
        metadata: { likely_human: '1', not_spam: '0' },
      });
      await g.gating.service.linkedRoles?.recheckAll();
      expect(held(g, [m.id], 'not_spam')).toEqual(['0']);
      // Web3.bio suddenly no longer finds the flagged identity: its flag is kept.
      g.h.upstream.world.setCredentials(m.flagged, null);
      await g.gating.service.linkedRoles?.recheckAll();
      await g.gating.service.linkedRoles?.recheckAll();
      expect(held(g, [m.id], 'not_spam')).toEqual(['0']);
      await clearFlag(g, m);
      expect(held(g, [m.id], 'likely_human')).toEqual(['1']);
    });

    it('/unverify, then a new clean proof: not_spam stays 0 until the flagged identity itself clears', async () => {
      const g = await start();
      const m = await flaggedMember(g, 'resetter');
      expect(await g.gating.service.linkedRoles?.recheckAll()).toMatchObject({ unchanged: 1 });
      const unverify = JSON.stringify(visibleMessage(await g.h.run('unverify', {}, { userId: m.id })));
      expect(unverify).toContain('Linked Roles connection was cleared');
      expect(g.h.discord.oauth.roleConnections.get(m.id)?.metadata).toEqual({});
      expect((await proveRecord(await signIn(g, m.id), m.clean)).status).toBe(200);
      expect(g.h.discord.oauth.roleConnections.get(m.id)?.metadata).toMatchObject({
        likely_human: '1',
        not_spam: '0',
      });
      await clearFlag(g, m);
    });
  });

  describe("a member's Discord tokens", () => {
    it('an access token Discord revoked is refreshed once and the change written; a refused refresh marks the connection stale', async () => {
      const g = await start();
      const id = await addMember(g, 'tokenholder');
      addIdentity(g, 'tokens.eth', { discordHandle: 'tokenholder', human: true });
      expect((await proveRecord(await signIn(g, id), 'tokens.eth')).status).toBe(200);
      const service = g.gating.service.linkedRoles;

      g.h.discord.oauth.revokeAccessTokens(id);
      g.h.upstream.world.setCredentials(
        'tokens.eth',
        gatingCredentials('tokens.eth', { human: true, spam: true }),
      );
      const before = tokenCalls(g);
      expect(await service?.recheckAll()).toMatchObject({ written: 1, stale: 0 });
      expect(tokenCalls(g)).toBe(before + 1);
      expect(held(g, [id], 'not_spam')).toEqual(['0']);
      expect(await g.gating.store.getRoleConnection(id)).toMatchObject({ staleSince: null });
      expect(await service?.recheckAll()).toMatchObject({ unchanged: 1 });
      expect(tokenCalls(g)).toBe(before + 1);

      // The member deauthorized the app: the refresh is refused too.
      g.h.discord.oauth.revokeUser(id);
      g.h.upstream.world.setCredentials('tokens.eth', gatingCredentials('tokens.eth', { human: true }));
      expect(await service?.recheckAll()).toMatchObject({ stale: 1 });
      expect(tokenCalls(g)).toBe(before + 2);
      expect(await g.gating.store.getRoleConnection(id)).toMatchObject({
        sealedAccessToken: null,
        sealedRefreshToken: null,
      });
      expect(await whoami(g, id)).toContain('Discord no longer accepts the connection');
    });
  });
});
