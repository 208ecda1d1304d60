/**
 * What the shipped suite acts out against every deployment of the built bot: one member's day with the
 * bot, touching each kind of call the bot makes to the outside, every one read back through the stand-ins
 * (the stand-in Discord records each request), Redis and PostgreSQL (read with connections of the test's
 * own). Each deployment's file starts its processes and the stand-ins, then registers these steps.
 *
 * | Outbound call                                   | Step                                                |
 * |-------------------------------------------------|-----------------------------------------------------|
 * | interaction callback (or the HTTP response)     | every step; a lookup's card                         |
 * | webhook edit of @original                       | `/gating setup`, `/gating export`                   |
 * | webhook delete and follow-up                    | a public lookup that fails after its deferral       |
 * | multipart upload                                | `/gating export`: plain, gzipped, one file too large |
 * | OAuth2 (authorize, token, /users/@me)           | the signing page's Discord sign-in; Linked Roles    |
 * | role connection (the member's own token)        | Linked Roles: a proof by record                     |
 * | role edits (PUT and DELETE)                     | `/verify` by record; a wallet signature taking over |
 * | a role edit refused (403 Missing Permissions)   | held, not retried: discord.js's error class, bundled |
 * | channel messages: log channel, verify panel, DM | setup, `/gating panel`, the takeover                |
 * | Redis                                           | the lookup's answer in the shared cache             |
 * | the catalogs beside the bundle                  | `/whoami` in German                                 |
 * | PostgreSQL                                      | links and the export, read from the database        |
 */
import { randomBytes } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { Redis } from 'ioredis';
import pg from 'pg';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { expect, it } from 'vitest';
import {
  type FakeDiscord,
  type FakeDiscordOptions,
  type FakeGuild,
  type FakeMessage,
  type InteractionResult,
  type RecordedRestRequest,
  startFakeDiscord,
} from '../../fakes/discord/server.ts';
import { createDatabase } from '../../fakes/localPostgres.ts';
import { ensProfile, gatingCredentials, nextAddress } from '../../fakes/web3bio/builders.ts';
import { type FakeWeb3Bio, startFakeWeb3Bio } from '../../fakes/web3bio/server.ts';
import { VERIFY_PANEL_IDS } from '../../src/discord/verifyPanel.ts';
import { ROLE_CONNECTION_METADATA } from '../../src/gating/linkedRoles/linkedRoles.ts';
import { type GatingStore, openPostgresStore } from '../../src/store/index.ts';
import { ALICE, BOB, isEphemeral, toCommandOptions, visibleMessage } from '../e2e/harness.ts';
import type { NodeProcess } from '../e2e/processes.ts';
import { csrfOf, TestBrowser, textOf } from '../testBrowser.ts';
import { standInsEnv } from './shippedBot.ts';

export const PUBLIC_URL = 'https://verify.example.test';
/** 32 bytes as 64 hex characters: seals stored refresh tokens and hand-off tokens. */
export const TOKEN_ENCRYPTION_KEY = 'a1'.repeat(32);
const REDIS_URL = 'redis://127.0.0.1:6379';

/** One deployment of the built bot against the stand-ins, as a test file started it. */
export interface Deployment {
  discord: FakeDiscord;
  upstream: FakeWeb3Bio;
  /** The guild the steps play in (on a shard of its own, when sharded). */
  guild: FakeGuild;
  humanRoleId: string;
  /** A role no rule gives yet: the dashboard step adds one for it. */
  ruleRoleId: string;
  /** Where PUBLIC_URL's pages are served (the process that serves them). */
  pagesUrl: string;
  /** A second replica serving them, behind the same PUBLIC_URL (a load balancer's other choice). */
  otherPagesUrl?: string;
  databaseUrl: string;
  redisPrefix: string;
  /** Every bot process of the deployment (their output is checked for the token). */
  processes(): NodeProcess[];
}

/** What a deployment's processes run against: the stand-ins, a database and a Redis prefix of its own. */
export interface Stage {
  discord: FakeDiscord;
  upstream: FakeWeb3Bio;
  databaseUrl: string;
  redisPrefix: string;
  /** The environment every process of the deployment shares: stand-ins, stores, gating, the sign-in. */
  env: Record<string, string>;
  close(): Promise<void>;
}

export async function startStage(name: string, discordOptions: FakeDiscordOptions = {}): Promise<Stage> {
  const [discord, upstream, db] = await Promise.all([
    startFakeDiscord(discordOptions),
    startFakeWeb3Bio(),
    createDatabase(`shipped_${name}`),
  ]);
  const prefix = `shipped-${name}-${process.pid}-${randomBytes(4).toString('hex')}:`;
  return {
    discord,
    upstream,
    databaseUrl: db.url,
    redisPrefix: prefix,
    env: {
      ...standInsEnv(discord, upstream),
      DISCORD_CLIENT_SECRET: discord.oauth.clientSecret,
      TOKEN_ENCRYPTION_KEY,
      DATABASE_URL: db.url,
      REDIS_URL,
      REDIS_PREFIX: prefix,
      GATING_ENABLED: 'true',
      LINKED_ROLES_ENABLED: 'true',
      DASHBOARD_ENABLED: 'true',
      PUBLIC_URL,
      HTTP_HOST: '127.0.0.1',
      USER_COOLDOWN_COMMANDS: '100',
      // A lookup slower than this is deferred: the failing lookup below waits longer upstream.
      DEFER_AFTER_MS: '300',
      LOG_LEVEL: 'info',
    },
    async close() {
      await Promise.all([discord.close(), upstream.close()]);
      await db.drop();
    },
  };
}

const CAROL = '300000000000000003';
const HOSTILE = '=HYPERLINK("http://evil.example","x")';
const DANA = '300000000000000004';

/** A guild with four members and the role gating gives, for `discord.addGuild` before the bot starts. */
export function seedGuild(
  discord: FakeDiscord,
  guildId?: string,
): { guild: FakeGuild; humanRoleId: string; ruleRoleId: string } {
  const guild = discord.addGuild({ ...(guildId ? { id: guildId } : {}), name: 'Shipped Guild' });
  for (const [id, username] of [
    [ALICE, 'alice'],
    [BOB, 'bob'],
    [CAROL, 'carol'],
    [DANA, 'dana'],
  ] as const)
    discord.addMember(guild.id, { id, username });
  const human = discord.addRole(guild.id, { name: 'Verified Human', position: 2 });
  const ruled = discord.addRole(guild.id, { name: 'Scored', position: 1 });
  discord.oauth.allowRedirect(`${PUBLIC_URL}/oauth/callback`);
  discord.oauth.allowRedirect(`${PUBLIC_URL}/dashboard/callback`);
  discord.oauth.allowRedirect(`${PUBLIC_URL}/linked-role/callback`);
  Object.assign(discord.oauth, { roleConnectionMetadata: ROLE_CONNECTION_METADATA });
  return { guild, humanRoleId: human.id, ruleRoleId: ruled.id };
}

/** `/gating setup` by the guild's owner: `humanRoleId` is the role gating gives (the other settings unset). */
export function gatingSetup(
  discord: FakeDiscord,
  guild: FakeGuild,
  humanRoleId: string,
): Promise<InteractionResult> {
  return discord.runCommand({
    name: 'gating',
    guildId: guild.id,
    userId: guild.ownerId,
    options: [
      { type: 1, name: 'setup', options: [{ type: 8, name: 'human-role', value: humanRoleId }] },
    ] as never,
    timeoutMs: 20_000,
  });
}

/** Registers the steps; `deployment` is read when they run (the file's beforeAll makes it). */
export function actOut(deployment: () => Deployment): void {
  const wallet = privateKeyToAccount(generatePrivateKey());
  const address = wallet.address.toLowerCase();
  let mark = 0;
  const since = () => deployment().discord.requests.slice(mark);
  const begin = () => {
    mark = deployment().discord.requests.length;
  };

  it('a lookup: its card is the first response, and its answer lands in the shared Redis cache', async () => {
    const d = deployment();
    const result = await command(d, 'whois', ALICE, { identity: 'vitalik.eth' });
    expect(result.callbacks[0]?.type).toBe(4);
    expect(visibleMessage(result).embeds[0]?.author?.name).toContain('vitalik.eth');
    const redis = new Redis(REDIS_URL, { lazyConnect: true });
    try {
      await redis.connect();
      const keys = await redis.keys(`${d.redisPrefix}*`);
      expect(keys.some((key) => key.endsWith(':vitalik.eth'))).toBe(true);
    } finally {
      redis.disconnect();
    }
  });

  it('/gating setup and /gating panel: the answers, and the panel posted as a channel message', async () => {
    const d = deployment();
    const setup = await gating(d, 'setup', [
      { type: 8, name: 'human-role', value: d.humanRoleId },
      { type: 7, name: 'log-channel', value: d.guild.textChannelId },
    ]);
    expect(isEphemeral(visibleMessage(setup))).toBe(true);
    expect(JSON.stringify(visibleMessage(setup))).toContain('Verified Human');
    const panel = await gating(d, 'panel', [{ type: 7, name: 'channel', value: d.guild.textChannelId }]);
    expect(visibleMessage(panel).content + JSON.stringify(visibleMessage(panel).embeds)).toContain(
      'The verify panel is now in',
    );
    const posted = await d.discord.waitForRequest(
      (r) =>
        r.method === 'POST' &&
        r.path === `/channels/${d.guild.textChannelId}/messages` &&
        JSON.stringify(r.body).includes(VERIFY_PANEL_IDS.verify),
    );
    expect(posted.status).toBe(200);
  });

  it('/verify by record: the role is given (a role edit), the link is in PostgreSQL, the log channel says so', async () => {
    const d = deployment();
    d.upstream.world.addProfile(ensProfile('alice.eth', address, 'alice'));
    d.upstream.world.setCredentials('alice.eth', gatingCredentials('alice.eth', { human: true }));
    const reply = visibleMessage(await command(d, 'verify', ALICE, { identity: 'alice.eth' }));
    expect(JSON.stringify(reply)).toContain('alice.eth');
    await until(() => holds(d, ALICE), 'the human role for Alice');
    const put = await d.discord.waitForRequest(
      (r) => r.method === 'PUT' && r.path === roleRoute(d, ALICE),
      10_000,
    );
    expect(put.status).toBe(204);
    expect(await links(d)).toEqual([{ user_id: ALICE, identity: 'alice.eth', proof_method: 'record' }]);
    await until(() => logLines(d).some((line) => line.includes('alice.eth')), 'a log line naming alice.eth');
  });

  it("a wallet signature through the Discord sign-in takes Alice's wallet over: OAuth2, both role edits, a DM", async () => {
    const d = deployment();
    d.upstream.world.setCredentials(address, gatingCredentials(address, { human: true }));
    const reply = visibleMessage(await command(d, 'verify', BOB, { identity: wallet.address }));
    const link = signingLink(reply);
    d.discord.oauth.signInAs(BOB);
    const browser = new TestBrowser(PUBLIC_URL, () => d.pagesUrl);
    const page = await browser.open(link);
    expect(page.status).toBe(200);
    // The sign-in went through the stand-in's authorize page, token endpoint and /users/@me.
    expect(page.hops.some((hop) => hop.includes('/oauth2/authorize'))).toBe(true);
    const oauth = d.discord.requests.filter((r) => r.path === '/oauth2/token' || r.path === '/users/@me');
    expect(oauth.map((r) => [r.method, r.path, r.status])).toEqual(
      expect.arrayContaining([
        ['POST', '/oauth2/token', 200],
        ['GET', '/users/@me', 200],
      ]),
    );
    const local = link.replace(PUBLIC_URL, d.pagesUrl);
    const got = await fetch(`${local}/message`, { headers: { cookie: browser.cookieHeader(local) } });
    const { message } = (await got.json()) as { message: string };
    const sent = await fetch(local, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: browser.cookieHeader(local) },
      body: JSON.stringify({ signature: await wallet.signMessage({ message }) }),
    });
    expect(sent.status).toBe(200);
    await until(() => holds(d, BOB) && !holds(d, ALICE), 'the role to move from Alice to Bob', 20_000);
    const removed = d.discord.requests.find((r) => r.method === 'DELETE' && r.path === roleRoute(d, ALICE));
    expect(removed?.status).toBe(204);
    expect(await links(d)).toEqual([{ user_id: BOB, identity: address, proof_method: 'signature' }]);
    await until(() => directMessagesTo(d, ALICE).some((text) => text.includes('alice.eth')), 'a DM to Alice');
  });

  it('the signature left an account proof (migration 22): /verify with no identity offers it as "Use … here"; one click links it with no signing link', async () => {
    const d = deployment();
    const listed = visibleMessage(await command(d, 'verify', BOB, {}));
    expect(JSON.stringify(listed.components)).toContain(`Use ${address} here`);
    const clicked = await d.discord.clickComponent({
      message: listed,
      customId: `verify|use|${address}`,
      userId: BOB,
      timeoutMs: 20_000,
    });
    const answer = JSON.stringify(visibleMessage(clicked));
    expect(answer).toContain('was proven before by your own signature');
    expect(answer).not.toContain(`${PUBLIC_URL}/verify/`);
    expect(await links(d)).toEqual([{ user_id: BOB, identity: address, proof_method: 'signature' }]);
  });

  it('/whoami for a member whose Discord is in German: the gating catalogs beside the bundle, read on first use', async () => {
    const d = deployment();
    const reply = visibleMessage(await command(d, 'whoami', BOB, {}, 'de'));
    expect(reply.embeds[0]?.title).toBe('Deine Web3-Identitäten');
    expect(JSON.stringify(reply)).toContain('1 nachgewiesene Identität auf diesem Server');
  });

  it('/gating export: three CSV files uploaded in one multipart request, read back from the stand-in', async () => {
    const d = deployment();
    begin();
    const result = await gating(d, 'export');
    const reply = visibleMessage(result);
    expect(isEphemeral(reply)).toBe(true);
    const files = filesOf(d, reply);
    expect([...files.keys()].sort()).toEqual(['audit-30d.csv', 'members.csv', 'roles.csv']);
    expect(files.get('members.csv')).toContain(`${BOB},bob,${address},ethereum,signature,`);
    expect(files.get('roles.csv')).toContain(`${BOB},${d.humanRoleId},Verified Human,`);
    expect(files.get('audit-30d.csv')).toContain('role_removed');
    const upload = uploadOf(since());
    expect(upload.files.map((f) => f.filename).sort()).toEqual(['audit-30d.csv', 'members.csv', 'roles.csv']);
    expect(Number(upload.headers['content-length'])).toBeGreaterThan(0);
  });

  it('/gating export of a larger server: a hostile cell is inert; a file over the attachment limit is gzipped, one still over it is left out', async () => {
    const d = deployment();
    const store = await openPostgresStore(d.databaseUrl);
    try {
      for (let i = 0; i < 300; i++) {
        await store.saveLink(
          {
            guildId: d.guild.id,
            userId: String(400_000_000_000_000_000n + BigInt(i)),
            // One identity a spreadsheet would run as a formula, as a hostile member could prove it.
            identity: i === 0 ? HOSTILE : `${randomBytes(24).toString('hex')}.eth`,
            platform: 'ens',
            address: null,
            proofMethod: 'record',
            provenAt: Date.now(),
          },
          'shipped suite: a larger server',
        );
      }
    } finally {
      await store.close();
    }
    const full = filesOf(d, visibleMessage(await gating(d, 'export')));
    const members = full.get('members.csv') ?? '';
    expect(members.split('\r\n').length).toBeGreaterThan(300);
    expect(members).toContain(`"'=HYPERLINK(""http://evil.example"",""x"")"`);
    const gzipped = (text: string) => gzipSync(Buffer.from(text), { level: 9 }).byteLength;

    // Room for the gzipped members file but not for the plain one.
    const limit = Math.floor((gzipped(members) + Buffer.byteLength(members)) / 2);
    begin();
    const zipped = visibleMessage(await gating(d, 'export', [], { attachmentSizeLimit: limit }));
    expect(zipped.content).toContain('compressed (.csv.gz)');
    expect(zipped.attachments.map((a) => a.filename).sort()).toEqual(fitted(full, limit).attached);
    expect(zipped.attachments.map((a) => a.filename)).toContain('members.csv.gz');
    expect(filesOf(d, zipped)).toEqual(new Map([...full].filter(([name]) => fitted(full, limit).kept(name))));
    for (const file of uploadOf(since()).files) expect(file.size).toBeLessThanOrEqual(limit);

    // Not even room for the gzipped members file: it is named, not attached.
    const tight = gzipped(members) - 1;
    begin();
    const left = visibleMessage(await gating(d, 'export', [], { attachmentSizeLimit: tight }));
    expect(left.content).toContain('Too large to attach even compressed:');
    expect(left.content).toContain('members.csv.gz');
    expect(left.attachments.map((a) => a.filename).sort()).toEqual(fitted(full, tight).attached);
    expect(left.attachments.map((a) => a.filename)).not.toContain('members.csv.gz');
    // Nothing the bot sent was refused for its size.
    expect(since().filter((r) => r.status === 413)).toEqual([]);
  });

  it('a public lookup that fails after its deferral: the "thinking…" message is deleted, a private follow-up says why', async () => {
    const d = deployment();
    d.upstream.addFault({ match: 'slow-unknown.eth', times: 1, action: { kind: 'latency', ms: 900 } });
    begin();
    const result = await command(d, 'whois', ALICE, { identity: 'slow-unknown.eth' });
    expect(result.callbacks[0]?.type).toBe(5);
    const followUp = await until(() => result.followUps[0], 'the follow-up');
    expect(isEphemeral(followUp)).toBe(true);
    expect(followUp.embeds[0]?.title).toContain('Nothing found');
    const token = since().find((r) => r.method === 'DELETE' && r.path.endsWith('/messages/@original'));
    expect(token?.status).toBe(204);
    expect(since().some((r) => r.method === 'POST' && /^\/webhooks\/\d+\/[^/]+$/.test(r.path))).toBe(true);
  });

  it("Linked Roles: the member signs in with Discord, proves a name by its record, and the bot writes the role connection with the member's token", async () => {
    const d = deployment();
    d.upstream.world.addProfile(ensProfile('carol.eth', nextAddress(), 'carol'));
    d.upstream.world.setCredentials('carol.eth', gatingCredentials('carol.eth', { human: true }));
    d.discord.oauth.signInAs(CAROL);
    const browser = new TestBrowser(PUBLIC_URL, () => d.pagesUrl);
    const form = await browser.open(`${PUBLIC_URL}/linked-role`);
    expect(form.status).toBe(200);
    expect(form.text).toContain('@carol');
    const proved = await browser.open(`${PUBLIC_URL}/linked-role/prove`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ identity: 'carol.eth' }).toString(),
    });
    expect(proved.status).toBe(200);
    expect(d.discord.oauth.roleConnections.get(CAROL)).toMatchObject({
      platform_name: 'Web3.bio',
      platform_username: 'carol.eth',
      metadata: { likely_human: '1', not_spam: '1' },
    });
    const written = d.discord.requests.find(
      (r) =>
        r.method === 'PUT' && r.path === `/users/@me/applications/${d.discord.applicationId}/role-connection`,
    );
    expect(written?.status).toBe(200);
    expect(written?.headers.authorization).toMatch(/^Bearer /);
  });

  it('a role edit Discord refuses with Missing Permissions is held, not retried, and the log channel says why', async () => {
    const d = deployment();
    d.upstream.world.addProfile(ensProfile('dana.eth', nextAddress(), 'dana'));
    d.upstream.world.setCredentials('dana.eth', gatingCredentials('dana.eth', { human: true }));
    d.discord.addFault({
      method: 'PUT',
      path: new RegExp(`/members/${DANA}/roles/`),
      times: Number.POSITIVE_INFINITY,
      status: 403,
      body: { message: 'Missing Permissions', code: 50_013 },
    });
    try {
      await command(d, 'verify', DANA, { identity: 'dana.eth' });
      await until(
        () => logLines(d).some((line) => line.includes('Discord answered Missing Permissions')),
        'the log channel to say why',
      );
      // Held until a probe later (nextProbeMs), not retried now: one refused edit.
      const blocked = await until(
        () =>
          d
            .processes()
            .flatMap((p) => p.logLines())
            .find((l) => l.msg === 'gated role blocked' && l.roleId === d.humanRoleId),
        'the role to be held',
      );
      expect(Number(blocked.nextProbeMs)).toBeGreaterThan(10_000);
      const refused = d.discord.requests.filter((r) => r.method === 'PUT' && r.path === roleRoute(d, DANA));
      expect(refused.map((r) => r.status)).toEqual([403]);
      expect(holds(d, DANA)).toBe(false);
    } finally {
      d.discord.clearFaults();
    }
  });

  it("the owners' dashboard: Discord sign-in, the server list, the overview's charts, a rule by preview and Apply, a cross-site post refused, the audit CSV", async () => {
    const d = deployment();
    d.discord.oauth.signInAs(d.guild.ownerId);
    // Requests alternate between the replicas, if two serve the pages: the sign-in spans both.
    const replicas = [d.pagesUrl, ...(d.otherPagesUrl ? [d.otherPagesUrl] : [])];
    const served: string[] = [];
    const owner = new TestBrowser(PUBLIC_URL, () => {
      const url = replicas[served.length % replicas.length] ?? d.pagesUrl;
      served.push(url);
      return url;
    });
    const list = await owner.get('/dashboard');
    expect(list.status).toBe(200);
    expect(new Set(served)).toEqual(new Set(replicas));
    expect(d.discord.requests.some((r) => r.path === '/users/@me/guilds' && r.status === 200)).toBe(true);
    const base = `/dashboard/${d.guild.id}`;
    expect(list.text).toContain(`href="${base}"`);
    expect(textOf(list.text)).toContain('Shipped Guild');

    const overview = await owner.get(base);
    expect(overview.status).toBe(200);
    expect(overview.text.match(/<svg viewBox="[^"]+" role="img"/g)?.length).toBeGreaterThan(0);
    const proven = await fromStore(d, (store) => store.countLinkedUsers(d.guild.id));
    expect(proven).toBeGreaterThan(0);
    expect(textOf(overview.text)).toContain(
      `Members with a proven identity ${proven.toLocaleString('en-US')} `,
    );

    const csrf = csrfOf((await owner.get(`${base}/rules`)).text);
    const form = { csrf, role: d.ruleRoleId, kind: 'score', value: '30' };
    const preview = await owner.post(`${base}/rules/preview`, form);
    expect(preview.status).toBe(200);
    expect(textOf(preview.text)).toContain('Dry run: nothing is stored yet');
    const apply = Object.fromEntries(
      [...preview.text.matchAll(/<input type="hidden" name="(role|condition|match)" value="([^"]*)">/g)].map(
        (m) => [m[1], m[2]],
      ),
    ) as Record<string, string>;
    expect(apply).toEqual({ role: d.ruleRoleId, condition: 'score:30', match: '' });

    const forged = await owner.request(`${base}/rules/apply`, {
      form: { csrf, ...apply },
      headers: { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' },
    });
    expect(forged.status).toBe(403);
    expect(await ruleConditions(d)).toEqual([]);

    const applied = await owner.post(`${base}/rules/apply`, { csrf, ...apply });
    expect(textOf(applied.text)).toContain('Stored for Scored');
    expect(await ruleConditions(d)).toEqual([{ roleId: d.ruleRoleId, condition: 'score:30' }]);
    const listed = await d.discord.runCommand({
      name: 'gating',
      guildId: d.guild.id,
      userId: d.guild.ownerId,
      options: [{ type: 2, name: 'rule', options: [{ type: 1, name: 'list', options: [] }] } as never],
      timeoutMs: 20_000,
    });
    expect(JSON.stringify(visibleMessage(listed))).toContain('humanity score ≥ 30');

    const csv = await owner.get(`${base}/audit.csv`);
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toContain('text/csv');
    const lines = csv.text.trimEnd().split('\r\n');
    expect(lines[0]).toBe('\uFEFFtime,kind,member_id,role_id,reason,actor');
    expect(lines.some((line) => line.includes(',role_removed,'))).toBe(true);

    // Signing out while Discord refuses the revocation: the cookie is cleared all the same, and a copy of
    // it taken before opens nothing on any replica (the sign-out is in the shared store).
    const taken = new Map(owner.cookies);
    d.discord.addFault({ path: /^\/oauth2\/token\/revoke$/, status: 503 });
    try {
      const out = await owner.post('/dashboard/sign-out', { csrf });
      expect(out.status).toBe(200);
      expect(owner.cookies.has('dashboard_session')).toBe(false);
      expect(d.discord.requests.some((r) => r.path === '/oauth2/token/revoke' && r.fault)).toBe(true);
      for (const replica of replicas) {
        const copy = new TestBrowser(PUBLIC_URL, () => replica);
        for (const [name, value] of taken) copy.cookies.set(name, { ...value });
        const replayed = await copy.get(base);
        expect(replayed.status).toBe(403);
        expect(textOf(replayed.text)).not.toContain('Shipped Guild');
      }
    } finally {
      d.discord.clearFaults();
    }
  });

  it('never writes the bot token, the client secret or the encryption key to its output', () => {
    const d = deployment();
    for (const process of d.processes()) {
      const { stdout, stderr } = process.output();
      for (const secret of [d.discord.token, d.discord.oauth.clientSecret, TOKEN_ENCRYPTION_KEY]) {
        expect(stdout).not.toContain(secret);
        expect(stderr).not.toContain(secret);
      }
    }
  });
}

/** The guild's stored rule conditions, read from PostgreSQL. */
async function ruleConditions(d: Deployment): Promise<{ roleId: string; condition: string }[]> {
  const rules = await fromStore(d, (store) => store.listRuleConditions(d.guild.id));
  return rules.map(({ roleId, condition }) => ({ roleId, condition }));
}

/** One read through a store of the test's own on the deployment's database. */
async function fromStore<T>(d: Deployment, read: (store: GatingStore) => Promise<T>): Promise<T> {
  const store = await openPostgresStore(d.databaseUrl);
  try {
    return await read(store);
  } finally {
    await store.close();
  }
}

/** `/gating <sub>` by the guild's owner. */
function gating(
  d: Deployment,
  sub: string,
  options: { type: number; name: string; value: string | number }[] = [],
  more: { attachmentSizeLimit?: number } = {},
): Promise<InteractionResult> {
  return d.discord.runCommand({
    name: 'gating',
    guildId: d.guild.id,
    userId: d.guild.ownerId,
    options: [{ type: 1, name: sub, options } as never],
    timeoutMs: 20_000,
    ...more,
  });
}

function command(
  d: Deployment,
  name: string,
  userId: string,
  options: Record<string, string>,
  locale?: string,
): Promise<InteractionResult> {
  return d.discord.runCommand({
    name,
    guildId: d.guild.id,
    userId,
    options: toCommandOptions(options),
    timeoutMs: 20_000,
    ...(locale ? { locale } : {}),
  });
}

function roleRoute(d: Deployment, userId: string): string {
  return `/guilds/${d.guild.id}/members/${userId}/roles/${d.humanRoleId}`;
}

function holds(d: Deployment, userId: string): boolean {
  return d.guild.members.get(userId)?.roles.includes(d.humanRoleId) ?? false;
}

function logLines(d: Deployment): string[] {
  return [...d.discord.state.messages.values()]
    .filter((m) => m.channel_id === d.guild.textChannelId && m.author.id === d.discord.botUserId)
    .map((m) => m.content);
}

function directMessagesTo(d: Deployment, userId: string): string[] {
  const channels = new Set(
    [...d.discord.state.dmChannels.values()]
      .filter((c) => c.recipients?.some((r) => r.id === userId))
      .map((c) => c.id),
  );
  return [...d.discord.state.messages.values()]
    .filter((m) => channels.has(m.channel_id))
    .map((m) => m.content);
}

function signingLink(reply: FakeMessage): string {
  const button = (reply.components?.[0] as { components: { url?: string }[] } | undefined)?.components[0];
  const url = button?.url ?? '';
  if (!url.startsWith(`${PUBLIC_URL}/verify/`)) throw new Error(`no signing link: ${JSON.stringify(reply)}`);
  return url;
}

/** The message's attachments as the stand-in stored them, by name (a .gz unzipped, its name without .gz). */
function filesOf(d: Deployment, message: FakeMessage): Map<string, string> {
  const out = new Map<string, string>();
  for (const attachment of message.attachments) {
    const stored = d.discord.state.files.get(attachment.id);
    if (!stored) throw new Error(`no bytes for ${attachment.filename}`);
    const gz = attachment.filename.endsWith('.gz');
    const bytes = gz ? gunzipSync(stored.data) : Buffer.from(stored.data);
    out.set(attachment.filename.replace(/\.gz$/, ''), bytes.toString('utf8'));
  }
  return out;
}

/** What fits under `limit`, as the export decides it: each file plain, else gzipped, else left out. */
function fitted(files: Map<string, string>, limit: number) {
  const form = (name: string, text: string) =>
    Buffer.byteLength(text) <= limit
      ? name
      : gzipSync(Buffer.from(text), { level: 9 }).byteLength <= limit
        ? `${name}.gz`
        : null;
  const attached = [...files].flatMap(([name, text]) => form(name, text) ?? []).sort();
  return { attached, kept: (name: string) => form(name, files.get(name) ?? '') !== null };
}

/** The one multipart request among `requests` that carried files. */
function uploadOf(requests: RecordedRestRequest[]): RecordedRestRequest {
  const uploads = requests.filter((r) => r.files.length > 0);
  expect(uploads).toHaveLength(1);
  const [upload] = uploads;
  if (!upload) throw new Error('no upload');
  expect(upload.status).toBe(200);
  expect(upload.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
  return upload;
}

/** The guild's active links, read from PostgreSQL with a connection of the test's own. */
async function links(d: Deployment): Promise<{ user_id: string; identity: string; proof_method: string }[]> {
  const client = new pg.Client({ connectionString: d.databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query(
      `SELECT user_id, identity, proof_method FROM links
       WHERE guild_id = $1 AND released_at IS NULL AND user_id IN ($2, $3) ORDER BY user_id, identity`,
      [d.guild.id, ALICE, BOB],
    );
    return rows;
  } finally {
    await client.end();
  }
}

/** Polls `check` (the stand-ins are driven by other processes) until it returns a truthy value. */
export async function until<T>(check: () => T, what: string, timeoutMs = 15_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
