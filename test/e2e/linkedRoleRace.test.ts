/**
 * One wallet, one Discord account across the application, under concurrency (issue #15, point 4): 20
 * accounts sign in on the Linked Roles page and sign with the same wallet, then all 20 completions land at
 * once, on PostgreSQL and with two bot processes sharing it. The store's registry decides: one account
 * holds the wallet and has `likely_human=1` on the stand-in Discord, the 19 others are refused with the
 * reason and Discord holds nothing for them.
 */
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterEach, describe, expect, it } from 'vitest';
import { createDatabase } from '../../fakes/localPostgres.ts';
import { gatingCredentials } from '../../fakes/web3bio/builders.ts';
import { ROLE_CONNECTION_METADATA } from '../../src/gating/linkedRoles/linkedRoles.ts';
import { TestBrowser } from '../testBrowser.ts';
import { closeGating, type GatingHarness, PUBLIC_URL, startGating, startSecondBot } from './gatingHarness.ts';

const ACCOUNTS = 20;
const LINKED_ENV = {
  DISCORD_CLIENT_SECRET: 'test-client-secret',
  LINKED_ROLES_ENABLED: 'true',
  TOKEN_ENCRYPTION_KEY: 'ef'.repeat(32),
  GATING_ENABLED: 'false',
};

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await closeGating();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A database of its own on the local PostgreSQL, dropped after the test. */
async function freshDatabase(): Promise<string> {
  const database = await createDatabase('linked_race');
  cleanups.push(database.drop);
  return database.url;
}

interface Ready {
  userId: string;
  browser: TestBrowser;
  signUrl: string;
  body: string;
}

/** Each account signs in on the Linked Roles page and asks to sign with the wallet; the wallet signs. */
async function readyToComplete(
  g: GatingHarness,
  wallet: ReturnType<typeof privateKeyToAccount>,
  count: number,
): Promise<Ready[]> {
  const oauth = g.h.discord.oauth;
  Object.assign(oauth, { roleConnectionMetadata: ROLE_CONNECTION_METADATA });
  oauth.allowRedirect(`${PUBLIC_URL}/linked-role/callback`);
  const ready: Ready[] = [];
  for (let i = 0; i < count; i += 1) {
    // Linked Roles need no guild intent: the account only has to exist on the stand-in Discord.
    const userId = `5${String(Date.now()).slice(-9)}${String(i).padStart(8, '0')}`;
    g.h.discord.addMember(g.guildId, { id: userId, username: `farm${i}` });
    oauth.signInAs(userId);
    const browser = new TestBrowser(PUBLIC_URL, () => g.gating.verifyUrl);
    expect((await browser.open(`${PUBLIC_URL}/linked-role`)).status).toBe(200);
    const sign = await browser.open(`${PUBLIC_URL}/linked-role/prove`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ identity: wallet.address, proof: 'signature' }).toString(),
    });
    expect(sign.status).toBe(200);
    expect(sign.url).toMatch(/\/linked-role\/sign\/[0-9a-f]{32}$/);
    const fetched = await fetch(`${sign.url}/message`, {
      headers: { cookie: browser.cookieHeader(sign.url) },
    });
    const { message } = (await fetched.json()) as { message: string };
    const body = JSON.stringify({ message, signature: await wallet.signMessage({ message }) });
    ready.push({ userId, browser, signUrl: sign.url, body });
  }
  return ready;
}

/** Every completion POSTed at once, each from its own browser (to `origin` instead, when given). */
async function completeAtOnce(ready: Ready[], origin?: (i: number) => string | undefined) {
  return Promise.all(
    ready.map(async (r, i) => {
      const other = origin?.(i);
      const url = other === undefined ? r.signUrl : `${other}${new URL(r.signUrl).pathname}`;
      const answer = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie: r.browser.cookieHeader(r.signUrl) },
        body: r.body,
      });
      return {
        userId: r.userId,
        status: answer.status,
        body: (await answer.json()) as { ok: boolean; reason?: string },
      };
    }),
  );
}

function humanWallet(g: GatingHarness): ReturnType<typeof privateKeyToAccount> {
  const wallet = privateKeyToAccount(generatePrivateKey());
  const address = wallet.address.toLowerCase();
  g.h.upstream.world.setCredentials(address, gatingCredentials(address, { human: true }));
  return wallet;
}

/** The accounts for which the stand-in Discord holds `likely_human=1`. */
function likelyHumans(g: GatingHarness, ready: Ready[]): string[] {
  return ready
    .filter((r) => g.h.discord.oauth.roleConnections.get(r.userId)?.metadata?.likely_human === '1')
    .map((r) => r.userId);
}

function expectOneWinner(
  answers: { userId: string; status: number; body: { ok: boolean; reason?: string } }[],
) {
  const won = answers.filter((a) => a.body.ok);
  expect(won).toHaveLength(1);
  for (const lost of answers.filter((a) => !a.body.ok)) {
    expect(lost.status).toBe(409);
    expect(lost.body.reason).toBe('raced');
  }
  return won[0]?.userId ?? '';
}

describe('20 accounts complete one wallet on the Linked Roles page at the same moment', () => {
  it('PostgreSQL: one account holds it and is likely human on Discord; 19 are refused, Discord holds nothing for them', async () => {
    const g = await startGating({ env: { ...LINKED_ENV, DATABASE_URL: await freshDatabase() } });
    const wallet = humanWallet(g);
    const ready = await readyToComplete(g, wallet, ACCOUNTS);
    const winner = expectOneWinner(await completeAtOnce(ready));
    expect(likelyHumans(g, ready)).toEqual([winner]);
    const live = (await g.gating.store.listRoleConnections()).filter((c) => c.releasedAt === null);
    expect(live.map((c) => c.userId)).toEqual([winner]);
    expect((await g.gating.store.getHolding('0', 'address', wallet.address.toLowerCase()))?.userId).toBe(
      winner,
    );
  }, 90_000);

  it('two bot processes sharing PostgreSQL, completions split across them: still exactly one', async () => {
    const databaseUrl = await freshDatabase();
    const g = await startGating({ env: { ...LINKED_ENV, DATABASE_URL: databaseUrl } });
    const wallet = humanWallet(g);
    const ready = await readyToComplete(g, wallet, ACCOUNTS);

    const second = await startSecondBot(g, { ...LINKED_ENV, DATABASE_URL: databaseUrl });
    cleanups.push(second.stop);

    const winner = expectOneWinner(
      await completeAtOnce(ready, (i) => (i % 2 === 0 ? second.url : undefined)),
    );
    expect(likelyHumans(g, ready)).toEqual([winner]);
    const live = (await g.gating.store.listRoleConnections()).filter((c) => c.releasedAt === null);
    expect(live.map((c) => c.userId)).toEqual([winner]);
  }, 90_000);
});
