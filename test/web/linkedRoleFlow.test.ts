/**
 * Linked Roles end to end through the stand-ins: the verification URL signs in with Discord
 * (`identify role_connections.write`), the member proves an identity by its record, the metadata is
 * written to the stand-in Discord; re-checks follow the credentials (never worse on a failed lookup),
 * refresh the token before it expires, mark the connection stale when Discord refuses the refresh;
 * clearing empties the metadata. No guild, no gateway, no Manage Roles anywhere.
 */
import { pino } from 'pino';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeDiscord, startFakeDiscord } from '../../fakes/discord/server.ts';
import { ensProfile, gatingCredentials, nextAddress } from '../../fakes/web3bio/builders.ts';
import { type FakeWeb3Bio, startFakeWeb3Bio } from '../../fakes/web3bio/server.ts';
import { createLookupCache } from '../../src/cache/lookupCache.ts';
import { MemoryStore } from '../../src/cache/memoryStore.ts';
import type { DiscordOAuthConfig } from '../../src/discord/oauth.ts';
import { LinkedRoleService, REFRESH_MARGIN_MS } from '../../src/gating/linkedRoles/linkedRoleService.ts';
import { ROLE_CONNECTION_METADATA } from '../../src/gating/linkedRoles/linkedRoles.ts';
import { createChallenge } from '../../src/gating/proofs/siwe.ts';
import { Evaluator } from '../../src/gating/rules/evaluation.ts';
import { PROVE_READ_MAX_AGE_MS } from '../../src/gating/rules/recordReads.ts';
import { openSqliteStore } from '../../src/store/sqliteStore.ts';
import type { GatingStore } from '../../src/store/types.ts';
import { FRESH_PROOF_READS } from '../../src/web/limits.ts';
import { startWebServer, type WebServer } from '../../src/web/server.ts';
import { createClientCacheOptions, Web3BioClient } from '../../src/web3bio/client.ts';
import { TestBrowser } from '../testBrowser.ts';

const ALICE = '222222222222222222';
const CLIENT_SECRET = 'client-secret-never-shown-0123456789';
const BOT_TOKEN = 'bot-token-linked-roles-0123';
const KEY = Buffer.alloc(32, 7);

let discord: FakeDiscord;
let web3: FakeWeb3Bio;
let web3bio: Web3BioClient;
let store: GatingStore;
let server: WebServer;
let service: LinkedRoleService;
let clock: { t: number };
let logs: string[];

beforeEach(async () => {
  discord = await startFakeDiscord({ clientSecret: CLIENT_SECRET, token: BOT_TOKEN });
  discord.addUser({ id: ALICE, username: 'alice' });
  web3 = await startFakeWeb3Bio({ seed: false });
  web3bio = new Web3BioClient({
    baseUrl: web3.url,
    rateLimit: null,
    retry: { retries: 0, baseDelayMs: 5, maxDelayMs: 10 },
    timeoutMs: 2_000,
    // On the test's clock, so that a cached answer ages as the test says.
    cache: createLookupCache({ store: new MemoryStore(), ...createClientCacheOptions(), now: () => clock.t }),
    closeCache: true,
  });
  clock = { t: Date.now() };
  const now = () => clock.t;
  store = await openSqliteStore(':memory:', { now });
  logs = [];
  const capture = (obj: object, msg?: string) => logs.push(JSON.stringify({ ...obj, msg }));
  const logger = { info: capture, warn: capture, error: capture };
  const oauth: DiscordOAuthConfig = {
    clientId: discord.applicationId,
    clientSecret: CLIENT_SECRET,
    apiUrl: discord.apiUrl,
    publicUrl: 'http://placeholder.invalid',
  };
  const evaluator = new Evaluator({ web3bio, store, logger: pino({ level: 'silent' }), now });
  service = new LinkedRoleService({ store, oauth, key: KEY, evaluator, logger, now });
  server = await startWebServer({
    port: 0,
    host: '127.0.0.1',
    store,
    siwe: { publicUrl: 'http://placeholder.invalid', now },
    logger,
    onVerified: async () => ({ ok: true }),
    linkedRoles: { oauth, key: KEY, evaluator, service },
    // Proofs are not limited here, so the cache's effect is measured alone (the limit: e2e/proveFlood.test.ts).
    limits: { signInsPerClient: 5, provesPerAccountPerMinute: 1_000, provesPerClientPerMinute: 1_000 },
  });
  oauth.publicUrl = server.url;
  discord.oauth.allowRedirect(`${server.url}/linked-role/callback`);
  const registered = await fetch(
    `${discord.apiUrl}/v10/applications/${discord.applicationId}/role-connections/metadata`,
    {
      method: 'PUT',
      headers: { authorization: `Bot ${BOT_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify(ROLE_CONNECTION_METADATA),
    },
  );
  expect(registered.status).toBe(200);
});

afterEach(async () => {
  await server.close();
  await store.close();
  await web3bio.close();
  await Promise.all([discord.close(), web3.close()]);
});

let seed = 0;
function identity(opts: { handle?: string; human?: boolean; spam?: boolean; address?: string } = {}): string {
  seed += 1;
  const name = `linked${seed}x${Date.now().toString(36)}.eth`;
  web3.world.addProfile(ensProfile(name, opts.address ?? nextAddress(), opts.handle ?? 'alice'));
  web3.world.setCredentials(name, gatingCredentials(name, opts));
  return name;
}

async function connect(name: string) {
  discord.oauth.signInAs(ALICE);
  const browser = new TestBrowser();
  const form = await browser.open(`${server.url}/linked-role`);
  const proved = await browser.open(`${server.url}/linked-role/prove`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ identity: name }).toString(),
  });
  return { browser, form, proved };
}

function noTokensIn(text: string): void {
  expect(text).not.toContain(CLIENT_SECRET);
  expect(text).not.toMatch(/fake-access\.|fake-refresh\./);
}

describe('PUBLIC_URL/linked-role', () => {
  it('signs in with identify role_connections.write, proves the record, and writes the metadata', async () => {
    const name = identity({ human: true });
    const { form, proved } = await connect(name);
    const authorize = new URL(form.hops[1] ?? '');
    expect(authorize.pathname).toBe('/oauth2/authorize');
    expect(authorize.searchParams.get('scope')).toBe('identify role_connections.write');
    expect(authorize.searchParams.get('redirect_uri')).toBe(`${server.url}/linked-role/callback`);
    expect(form.status).toBe(200);
    expect(form.text).toContain('@alice');
    expect(proved.status).toBe(200);
    expect(proved.text).toContain('Connected');

    expect(discord.oauth.roleConnections.get(ALICE)).toEqual({
      platform_name: 'Web3.bio',
      platform_username: name,
      metadata: expect.objectContaining({ likely_human: '1', not_spam: '1', not_risky: '1' }),
    });
    const record = await store.getRoleConnection(ALICE);
    expect(record).toMatchObject({ identity: name, staleSince: null, writtenAt: clock.t });
    noTokensIn(JSON.stringify(record));
    noTokensIn(logs.join('\n'));
  });

  it('refuses an identity whose record names someone else, and writes nothing', async () => {
    const name = identity({ handle: 'mallory', human: true });
    const { proved } = await connect(name);
    expect(proved.status).toBe(403);
    expect(proved.text).toContain('does not name your Discord username');
    expect(discord.oauth.roleConnections.has(ALICE)).toBe(false);
    expect(await store.getRoleConnection(ALICE)).toBeUndefined();
  });

  it('refuses a proof without the sign-in and a replayed callback', async () => {
    const name = identity();
    const direct = await fetch(`${server.url}/linked-role/prove`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `identity=${name}`,
    });
    expect(direct.status).toBe(401);
    const { browser, form } = await connect(name);
    const replay = await browser.open(form.hops[2] ?? '');
    expect(replay.status).toBe(400);
    expect(discord.oauth.roleConnections.get(ALICE)?.platform_username).toBe(name);
  });

  it('limits sign-ins per client address, since each one stores a state', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 6; i += 1) {
      const started = await fetch(`${server.url}/linked-role`, { redirect: 'manual' });
      await started.arrayBuffer();
      statuses.push(started.status);
    }
    expect(statuses).toEqual([303, 303, 303, 303, 303, 429]);
  });
});

describe('record proves on PUBLIC_URL/linked-role', () => {
  it('read the record fresh for the account’s first FRESH_PROOF_READS proves, then from the cache until PROVE_READ_MAX_AGE_MS has passed', async () => {
    const address = nextAddress();
    const name = identity({ handle: 'mallory', human: true, address });
    discord.oauth.signInAs(ALICE);
    const browser = new TestBrowser();
    await browser.open(`${server.url}/linked-role`);
    const prove = () =>
      browser.open(`${server.url}/linked-role/prove`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ identity: name }).toString(),
      });
    const recordReads = () =>
      web3.requests
        .map((r) => r.path)
        .filter((path) => /^\/(profile|domain)\//.test(path) && path.endsWith(`/${name}`))
        .sort();

    for (let i = 0; i < 20; i += 1) expect((await prove()).status).toBe(403);
    const read = [`/domain/${name}`, `/profile/ens/${name}`];
    expect(recordReads()).toEqual(read.flatMap((path) => Array<string>(FRESH_PROOF_READS).fill(path)));

    // The member fixes the record: a proof within the bound still sees the answer read before.
    web3.world.addProfile(ensProfile(name, address, 'alice'));
    expect((await prove()).status).toBe(403);
    clock.t += PROVE_READ_MAX_AGE_MS;
    const proved = await prove();
    expect(proved.status).toBe(200);
    expect(proved.text).toContain('Connected');
    expect(recordReads()).toHaveLength(2 * FRESH_PROOF_READS + 2);
    expect(discord.oauth.roleConnections.get(ALICE)?.platform_username).toBe(name);
  });
});

describe('Linked Roles re-checks', () => {
  it('follow the credentials (flags at once, losses confirmed), never write worse metadata on a failed lookup, and clear', async () => {
    const name = identity({ human: true });
    await connect(name);
    expect(await service.recheckAll()).toMatchObject({ unchanged: 1 });

    web3.world.setCredentials(name, gatingCredentials(name, { human: true, spam: true }));
    expect(await service.recheckAll()).toMatchObject({ written: 1 });
    expect(discord.oauth.roleConnections.get(ALICE)?.metadata).toMatchObject({ not_spam: '0' });

    web3.world.setCredentials(name, gatingCredentials(name, { human: false }));
    web3.addFault({ match: 'credential', action: { kind: 'status', status: 503 } });
    expect(await service.recheckAll()).toMatchObject({ lookup_failed: 1 });
    expect(discord.oauth.roleConnections.get(ALICE)?.metadata).toMatchObject({
      likely_human: '1',
      not_spam: '0',
    });
    web3.clearFaults();
    // The flag clears at once; the lost humanity waits to be seen again an hour (confirmMs) later.
    expect(await service.recheckAll()).toMatchObject({ written: 1 });
    expect(discord.oauth.roleConnections.get(ALICE)?.metadata).toMatchObject({
      likely_human: '1',
      not_spam: '1',
    });
    const firstSeen = (await store.getRoleConnection(ALICE))?.lossSeenAt;
    expect(firstSeen).toBe(clock.t);
    clock.t += 30 * 60_000;
    expect(await service.recheckAll()).toMatchObject({ loss_pending: 1 });
    expect((await store.getRoleConnection(ALICE))?.lossSeenAt).toBe(firstSeen);
    clock.t += 30 * 60_000;
    expect(await service.recheckAll()).toMatchObject({ written: 1 });
    expect(discord.oauth.roleConnections.get(ALICE)?.metadata).toMatchObject({
      likely_human: '0',
      not_spam: '1',
    });
    expect((await store.getRoleConnection(ALICE))?.lossSeenAt).toBeNull();

    expect(await service.clear(ALICE)).toBe(true);
    expect(discord.oauth.roleConnections.get(ALICE)).toEqual({
      platform_name: null,
      platform_username: null,
      metadata: {},
    });
    expect(await store.getRoleConnection(ALICE)).toBeUndefined();
    expect(await service.clear(ALICE)).toBe(false);
  });

  it('refresh the token before it expires, and mark the connection stale when Discord refuses', async () => {
    const name = identity({ human: true });
    await connect(name);
    const first = await store.getRoleConnection(ALICE);
    if (!first) throw new Error('no connection');
    clock.t = first.accessExpiresAt - REFRESH_MARGIN_MS + 1_000;
    expect(await service.recheckAll()).toMatchObject({ unchanged: 1 });
    const refreshed = await store.getRoleConnection(ALICE);
    expect(refreshed?.accessExpiresAt).toBeGreaterThan(first.accessExpiresAt);
    expect(refreshed?.sealedRefreshToken).not.toBe(first.sealedRefreshToken);

    discord.oauth.revokeUser(ALICE);
    clock.t = (refreshed?.accessExpiresAt ?? 0) - REFRESH_MARGIN_MS + 1_000;
    expect(await service.recheckAll()).toMatchObject({ stale: 1 });
    expect(await service.status(ALICE)).toMatchObject({ identity: name, stale: true });
    expect(await store.getRoleConnection(ALICE)).toMatchObject({
      sealedAccessToken: null,
      sealedRefreshToken: null,
    });
    // A stale connection is left out of later passes until the member connects again.
    expect(await service.recheckAll()).toMatchObject({ stale: 0, written: 0, unchanged: 0 });
    await connect(name);
    expect(await service.status(ALICE)).toMatchObject({ identity: name, stale: false });
    noTokensIn(logs.join('\n'));
  });

  it("forget a deauthorized member's connection, unless it was written after the deauthorization", async () => {
    const name = identity({ human: true });
    await connect(name);
    const deauthorizedAt = clock.t + 10_000;
    // The member deauthorizes, then reconnects before Discord's (late) event reaches the bot.
    clock.t += 20_000;
    await connect(name);
    expect(await service.forgetDeauthorized(ALICE, deauthorizedAt)).toBe(false);
    expect(await service.status(ALICE)).toMatchObject({ identity: name, stale: false });
    clock.t += 10_000;
    expect(await service.forgetDeauthorized(ALICE, clock.t)).toBe(true);
    expect(await store.getRoleConnection(ALICE)).toBeUndefined();
    expect(await service.forgetDeauthorized(ALICE, clock.t)).toBe(false);
    expect(logs.filter((l) => l.includes('the member deauthorized the app'))).toEqual([
      JSON.stringify({
        userId: ALICE,
        msg: 'linked role connection removed: the member deauthorized the app',
      }),
    ]);
  });
});

/** Signs in and asks for the signing link of `name`; the browser lands on its signing page. */
async function startSigning(name: string) {
  discord.oauth.signInAs(ALICE);
  const browser = new TestBrowser();
  await browser.open(`${server.url}/linked-role`);
  const page = await browser.open(`${server.url}/linked-role/prove`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ identity: name, proof: 'signature' }).toString(),
  });
  const post = (signature: string) =>
    browser.open(page.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ signature }),
    });
  return { browser, page, post };
}

describe('the wallet signature on PUBLIC_URL/linked-role', () => {
  it('refuses a wrong signature, writes on a valid one, refuses its replay, and shows what was written once', async () => {
    const wallet = privateKeyToAccount(generatePrivateKey());
    const name = identity({ handle: 'nobody', human: true, address: wallet.address.toLowerCase() });
    const { browser, page, post } = await startSigning(name);
    expect(page.status).toBe(200);
    expect(page.url).toMatch(/\/linked-role\/sign\/[0-9a-f]{32}$/);
    expect(page.text).toContain('every server (Linked Roles)');
    const { message } = JSON.parse((await browser.open(`${page.url}/message`)).text) as { message: string };
    expect(message).toContain('Link the Discord account @alice for Linked Roles in every server');

    const stranger = privateKeyToAccount(generatePrivateKey());
    const wrong = await post(await stranger.signMessage({ message }));
    expect(wrong.status).toBe(422);
    expect(JSON.parse(wrong.text)).toMatchObject({ ok: false, reason: 'wrong_address' });
    expect(discord.oauth.roleConnections.has(ALICE)).toBe(false);

    const signature = await wallet.signMessage({ message });
    const valid = await post(signature);
    expect(valid.status).toBe(200);
    expect(JSON.parse(valid.text)).toMatchObject({ ok: true, next: '/linked-role/done' });
    expect(discord.oauth.roleConnections.get(ALICE)).toMatchObject({
      platform_username: name,
      metadata: { likely_human: '1' },
    });
    const replay = await post(signature);
    expect(replay.status).toBe(410);
    expect(JSON.parse(replay.text)).toMatchObject({
      reason: 'used',
      message: expect.stringContaining('Start again from the Linked Roles page'),
    });

    const done = await browser.open(`${server.url}/linked-role/done`);
    expect(done.status).toBe(200);
    expect(done.text).toContain('proven by a wallet signature');
    expect(done.text).toContain('<dt>Likely human</dt><dd>yes</dd>');
    expect((await browser.open(`${server.url}/linked-role/done`)).status).toBe(401);
    const reopened = await browser.open(page.url);
    expect(reopened.status).toBe(410);
    expect(reopened.text).toContain('This signing link was already used');
    noTokensIn(logs.join('\n') + done.text);
  });

  it('a signing link expires with a clear page, and a name Web3.bio does not know is explained', async () => {
    const wallet = privateKeyToAccount(generatePrivateKey());
    const name = identity({ address: wallet.address.toLowerCase() });
    const { page, post } = await startSigning(name);
    clock.t += 11 * 60_000;
    const late = await post(`0x${'11'.repeat(65)}`);
    expect(late.status).toBe(410);
    expect(JSON.parse(late.text)).toMatchObject({ reason: 'expired' });
    const { browser } = await startSigning(name);
    expect((await new TestBrowser().open(page.url)).text).toContain('This signing link has expired');
    const unknown = await browser.open(`${server.url}/linked-role/prove`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ identity: 'nosuchname.eth', proof: 'signature' }).toString(),
    });
    expect(unknown.status).toBe(404);
    expect(unknown.text).toContain('Web3.bio knows no such identity');
    expect(unknown.text).not.toMatch(/at \w+ \(|Error:/);
  });

  it('never lets a /verify challenge and a Linked Roles challenge cross', async () => {
    const wallet = privateKeyToAccount(generatePrivateKey());
    const { page } = await startSigning(identity({ address: wallet.address.toLowerCase() }));
    const linkedNonce = page.url.split('/').at(-1) ?? '';
    expect((await fetch(`${server.url}/verify/${linkedNonce}/message`)).status).toBe(404);
    const asVerify = await fetch(`${server.url}/verify/${linkedNonce}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ signature: `0x${'11'.repeat(65)}` }),
    });
    expect(asVerify.status).toBe(404);
    const verify = await createChallenge(
      store,
      { publicUrl: 'http://placeholder.invalid' },
      {
        guildId: '111111111111111111',
        userId: ALICE,
        userName: 'alice',
        guildName: 'Web3 Lounge',
        identity: 'vitalik.eth',
        address: wallet.address,
      },
    );
    const opened = await new TestBrowser().open(`${server.url}/linked-role/sign/${verify.nonce}`);
    expect(opened.status).toBe(404);
    expect(opened.text).toContain('This signing link is not valid');
    expect((await store.getNonce(linkedNonce))?.usedAt).toBeNull();
  });
});
