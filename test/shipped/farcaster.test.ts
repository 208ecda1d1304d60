/**
 * Sign in with Farcaster in the built bot, split as an HTTP-interactions deployment runs it: the gateway
 * worker (PROCESS_ROLE=gateway) answers `/verify` and makes the flow in PostgreSQL; the web replica
 * (PROCESS_ROLE=web) serves the page behind the Discord sign-in, opens the relay channel, watches it,
 * checks the approval against the stand-in OP Mainnet node, and hands the proof to the worker, which links
 * the FID and gives the role. The bundle's `qr` draws the QR code. On the Linked Roles page the replica
 * writes the role connection itself once the approval holds, with the grant the flow kept (migration 21).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeOptimism, startFakeOptimism } from '../../fakes/farcaster/optimism.ts';
import { type FakeRelay, startFakeRelay } from '../../fakes/farcaster/relay.ts';
import { rawProfile } from '../../fakes/web3bio/builders.ts';
import { FARCASTER_NEEDS_DISCORD_SIGN_IN } from '../../src/app/gatingSetup.ts';
import { farcasterLinkOf } from '../e2e/farcasterHarness.ts';
import { ALICE, BOB, toCommandOptions, visibleMessage } from '../e2e/harness.ts';
import { freePort, runNode } from '../e2e/processes.ts';
import { TestBrowser } from '../testBrowser.ts';
import { gatingSetup, PUBLIC_URL, type Stage, seedGuild, startStage } from './scenario.ts';
import { npmStart, READY, type ShippedProcess, shippedMain, startShipped } from './shippedBot.ts';

describe('npm start split: Sign in with Farcaster from the web replica to the gateway worker', () => {
  let stage: Stage;
  let relay: FakeRelay;
  let chain: FakeOptimism;
  let web: ShippedProcess;
  let worker: ShippedProcess;
  let pagesUrl = '';
  let seeded: ReturnType<typeof seedGuild>;

  beforeAll(async () => {
    stage = await startStage('farcaster');
    [relay, chain] = await Promise.all([startFakeRelay(), startFakeOptimism()]);
    seeded = seedGuild(stage.discord);
    const env = {
      ...stage.env,
      INTERACTIONS: 'http',
      FARCASTER_RELAY_URL: relay.url,
      OPTIMISM_RPC_URL: chain.url,
    };
    const [workerPort, webPort] = [await freePort(), await freePort()];
    worker = await startShipped(
      { ...env, PROCESS_ROLE: 'gateway', HTTP_PORT: String(workerPort) },
      READY.bot,
    );
    web = await startShipped({ ...env, PROCESS_ROLE: 'web', HTTP_PORT: String(webPort) }, READY.replica);
    stage.discord.useInteractionsEndpoint(`http://127.0.0.1:${webPort}/interactions`);
    pagesUrl = `http://127.0.0.1:${webPort}`;
  }, 90_000);

  afterAll(async () => {
    await Promise.all([web?.stop(), worker?.stop()]);
    await Promise.all([relay?.close(), chain?.close()]);
    await stage?.close();
  });

  /** `name.farcaster` (FID `fid`, a verified human) on the stand-in Web3.bio; its custody key on the chain. */
  function farcasterHuman(name: string, fid: number) {
    const custody = privateKeyToAccount(generatePrivateKey());
    stage.upstream.world.addProfile(
      rawProfile('farcaster', name, null, { social: { uid: fid, follower: 5, following: 1 } }),
    );
    stage.upstream.world.setCredentials(`${name}.farcaster`, {
      isHuman: [
        {
          id: `farcaster,${name}`,
          platform: 'farcaster',
          category: 'isHuman',
          credentialSource: 'farcaster-pro',
          type: 'boolean',
          value: 'true',
          label: 'Farcaster verified human',
          description: 'fake',
          link: null,
          updatedAt: 1_700_000_000,
          expiredAt: null,
        },
      ],
      isRisky: [],
      isSpam: [],
    });
    chain.setCustody(fid, custody.address);
    return custody;
  }

  it('a member proves alice.farcaster: the page, the relay, the chain, the hand-off and the role', async () => {
    const { discord } = stage;
    const { guild, humanRoleId } = seeded;
    const run = (name: string, options: Record<string, string>, userId = guild.ownerId) =>
      discord.runCommand({
        name,
        guildId: guild.id,
        userId,
        options: toCommandOptions(options),
        timeoutMs: 20_000,
      });
    await gatingSetup(discord, guild, humanRoleId);
    const custody = farcasterHuman('alice', 120);

    const reply = visibleMessage(await run('verify', { identity: 'alice.farcaster' }, ALICE));
    // The reply's button is "Sign in with Farcaster", to the bot's page.
    const link = farcasterLinkOf(reply);
    discord.oauth.signInAs(ALICE);
    const browser = new TestBrowser(PUBLIC_URL, () => pagesUrl);
    expect((await browser.open(link)).status).toBe(200);
    const waiting = await browser.open(`${link}/start`, { method: 'POST' });
    expect(waiting.text).toContain('<h1>Approve in your Farcaster app</h1>');
    expect(waiting.text).toMatch(/<div class="qr"[^>]*><svg viewBox/);
    const channel = relay.lastChannel();
    if (!channel) throw new Error('no channel opened');
    await relay.approve(channel.token, { account: custody, fid: 120 });

    const deadline = Date.now() + 20_000;
    let page = await browser.open(link);
    while (!page.text.includes('<h1>Verified</h1>')) {
      if (Date.now() > deadline) throw new Error(`the page did not finish: ${page.text.slice(0, 400)}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
      page = await browser.open(link);
    }
    const db = new pg.Client({ connectionString: stage.databaseUrl });
    await db.connect();
    try {
      // The replica hands the proof to the worker through the store; the page may say it is queued.
      const linksNow = async () =>
        (await db.query('SELECT user_id, identity, proof_method, address FROM links')).rows;
      let rows = await linksNow();
      while (rows.length === 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        rows = await linksNow();
      }
      expect(rows).toEqual([
        {
          user_id: ALICE,
          identity: 'farcaster,#120',
          proof_method: 'signature',
          address: custody.address.toLowerCase(),
        },
      ]);
    } finally {
      await db.end();
    }
    const put = await discord.waitForRequest(
      (r) => r.method === 'PUT' && r.path === `/guilds/${guild.id}/members/${ALICE}/roles/${humanRoleId}`,
      20_000,
    );
    expect(put.status).toBe(204);
    for (const process of [web, worker]) expect(JSON.stringify(process.output())).not.toContain(chain.url);
  }, 60_000);

  it('Linked Roles: once the member approves, the web replica writes the role connection, no page loaded again', async () => {
    const { discord } = stage;
    const custody = farcasterHuman('bob', 121);
    discord.oauth.signInAs(BOB);
    const browser = new TestBrowser(PUBLIC_URL, () => pagesUrl);
    expect((await browser.open(`${PUBLIC_URL}/linked-role`)).status).toBe(200);
    const made = await browser.open(`${PUBLIC_URL}/linked-role/prove`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ identity: 'bob.farcaster', proof: 'farcaster' }).toString(),
    });
    expect(made.text).toContain('<h1>Sign in with Farcaster</h1>');
    const link = made.url.replace(pagesUrl, PUBLIC_URL);
    const waiting = await browser.open(`${link}/start`, { method: 'POST' });
    expect(waiting.text).toContain('<h1>Approve in your Farcaster app</h1>');
    const channel = relay.lastChannel();
    if (!channel) throw new Error('no channel opened');
    const path = `/users/@me/applications/${discord.applicationId}/role-connection`;
    const puts = () => discord.requests.filter((r) => r.method === 'PUT' && r.path === path);
    expect(puts()).toHaveLength(0);
    await relay.approve(channel.token, { account: custody, fid: 121 });

    // Only the replica's watch of the channel sees the approval: the browser loads nothing meanwhile.
    const put = await discord.waitForRequest((r) => r.method === 'PUT' && r.path === path, 20_000);
    expect(put.status).toBe(200);
    expect(put.headers.authorization).toMatch(/^Bearer /);
    expect(discord.oauth.roleConnections.get(BOB)).toMatchObject({
      platform_username: 'farcaster,#121',
      metadata: { likely_human: '1' },
    });
    const db = new pg.Client({ connectionString: stage.databaseUrl });
    await db.connect();
    try {
      // Migration 21 in the bundle: the flow's sealed grant is dropped with its outcome (recorded just
      // after the write).
      const flowNow = async () =>
        (
          await db.query('SELECT state, outcome, sealed_grant FROM farcaster_flows WHERE nonce = $1', [
            link.slice(-32),
          ])
        ).rows;
      const deadline = Date.now() + 10_000;
      let rows = await flowNow();
      while (rows[0]?.outcome === null && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        rows = await flowNow();
      }
      expect(rows).toMatchObject([{ state: 'done', outcome: { kind: 'connected' }, sealed_grant: null }]);
    } finally {
      await db.end();
    }
    const page = await browser.open(link);
    expect(page.text).toContain('<h1>Connected</h1>');
    expect(puts()).toHaveLength(1);
  }, 60_000);

  it('without DISCORD_CLIENT_SECRET a replica says at start-up that Farcaster sign-in is off and serves no page', async () => {
    const { DISCORD_CLIENT_SECRET: _secret, ...env } = stage.env;
    const port = await freePort();
    const bare = await startShipped(
      {
        ...env,
        LINKED_ROLES_ENABLED: 'false',
        DASHBOARD_ENABLED: 'false',
        INTERACTIONS: 'http',
        PROCESS_ROLE: 'web',
        HTTP_PORT: String(port),
        FARCASTER_RELAY_URL: relay.url,
        OPTIMISM_RPC_URL: chain.url,
      },
      READY.replica,
    );
    try {
      expect(bare.output().stdout).toContain(JSON.stringify(FARCASTER_NEEDS_DISCORD_SIGN_IN));
      const page = await fetch(`http://127.0.0.1:${port}/farcaster/${'0'.repeat(32)}`);
      expect(page.status).toBe(404);
    } finally {
      await bare.stop();
    }
  }, 60_000);
});

describe('npm start with an http:// RPC or relay URL beyond this machine', () => {
  it('refuses to start, naming each key and what it must be, without printing the URL', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'shipped-node-urls-'));
    try {
      const bot = runNode(
        shippedMain(),
        {
          DISCORD_TOKEN: 'token-abc',
          DISCORD_APPLICATION_ID: '123456789012345678',
          OPTIMISM_RPC_URL: 'http://10.0.0.5:8545/key-in-path-0123',
          FARCASTER_RELAY_URL: 'http://relay.example',
        },
        dir,
        npmStart().flags,
      );
      expect(await bot.exited).not.toBe(0);
      const printed = JSON.stringify(bot.output());
      const why = 'must be an https:// URL (http:// only to this machine: 127.0.0.0/8, localhost or [::1])';
      expect(printed).toContain(`FARCASTER_RELAY_URL ${why}`);
      expect(printed).toContain(`OPTIMISM_RPC_URL ${why}`);
      expect(printed).not.toContain('key-in-path-0123');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
