/**
 * Sign in with Farcaster end to end: the gating harness (the real bot against the stand-in Discord and
 * Web3.bio) plus the stand-in relay and OP Mainnet node, Farcaster accounts whose keys the test holds,
 * and the member's browser (which signs in to Discord and opens the bot's page over HTTP).
 */
import type { LocalAccount } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterEach, expect } from 'vitest';
import { closeInTurn } from '../../fakes/closeInTurn.ts';
import type { FakeMessage } from '../../fakes/discord/server.ts';
import { type FakeOptimism, startFakeOptimism } from '../../fakes/farcaster/optimism.ts';
import {
  type Approval,
  type FakeChannel,
  type FakeRelay,
  startFakeRelay,
} from '../../fakes/farcaster/relay.ts';
import { rawCredential, rawProfile } from '../../fakes/web3bio/builders.ts';
import { TestBrowser, type Visit } from '../testBrowser.ts';
import { closeGating, type GatingHarness, PUBLIC_URL, seen, setup, startGating } from './gatingHarness.ts';
import type { HarnessOptions } from './harness.ts';

export const CLIENT_SECRET = 'test-client-secret';

export interface FarcasterGating {
  g: GatingHarness;
  relay: FakeRelay;
  chain: FakeOptimism;
  close(): Promise<void>;
}

/** The gating bot with Sign in with Farcaster on (its relay and node the stand-ins), set up in its guild. */
export async function startFarcasterGating(options: HarnessOptions = {}): Promise<FarcasterGating> {
  const relay = await startFakeRelay();
  const chain = await startFakeOptimism();
  const g = await startGating({
    ...options,
    env: {
      DISCORD_CLIENT_SECRET: CLIENT_SECRET,
      FARCASTER_RELAY_URL: relay.url,
      OPTIMISM_RPC_URL: chain.url,
      ...options.env,
    },
  });
  g.h.discord.oauth.allowRedirect(`${PUBLIC_URL}/oauth/callback`);
  await setup(g);
  return {
    g,
    relay,
    chain,
    close: closeInTurn(relay, chain),
  };
}

/**
 * For a test file: a start function for `startFarcasterGating` with `env`, and an `afterEach` that puts
 * the relay back up and closes what the test started.
 */
export function farcasterGatingPerTest(): (env?: Record<string, string>) => Promise<FarcasterGating> {
  let current: FarcasterGating | undefined;
  afterEach(async () => {
    current?.relay.setMode('up');
    await current?.close();
    current = undefined;
    await closeGating();
  });
  return async (env = {}) => {
    current = await startFarcasterGating({ env });
    return current;
  };
}

export interface FarcasterAccount {
  name: string;
  fid: number;
  /** The custody key (the member's Farcaster app holds it). */
  custody: LocalAccount;
  /** The address Web3.bio lists on the profile (a verified wallet, not the custody address). */
  listed: string;
}

/**
 * A Farcaster account: its profile on the stand-in Web3.bio (`name.farcaster`, its FID and followers,
 * a `discord` link when given), its own isHuman credential (filed as `farcaster,<name>`) unless `human`
 * is false, and its custody address on the stand-in chain.
 */
export function farcasterAccount(
  f: FarcasterGating,
  name: string,
  fid: number,
  opts: { followers?: number; human?: boolean; discordHandle?: string; spam?: boolean } = {},
): FarcasterAccount {
  const custody = privateKeyToAccount(generatePrivateKey());
  const listed = privateKeyToAccount(generatePrivateKey()).address.toLowerCase();
  const links = opts.discordHandle
    ? { discord: { link: '', handle: opts.discordHandle, sources: ['farcaster'] } }
    : {};
  f.g.h.upstream.world.addProfile(
    rawProfile('farcaster', name, listed, {
      links,
      social: { uid: fid, follower: opts.followers ?? 10, following: 3 },
    }),
  );
  const entry = (category: 'isHuman' | 'isSpam') =>
    rawCredential({
      id: `farcaster,${name}`,
      category,
      platform: 'farcaster',
      source: category === 'isHuman' ? 'farcaster-pro' : 'warpcast',
      type: category === 'isHuman' ? 'boolean' : 'score',
      value: category === 'isHuman' ? 'true' : '0',
      label: category === 'isHuman' ? 'Farcaster verified human' : 'Farcaster spam label',
      updatedAt: 1_700_000_000,
    });
  f.g.h.upstream.world.setCredentials(`${name}.farcaster`, {
    isHuman: opts.human === false ? [] : [entry('isHuman')],
    isRisky: [],
    isSpam: opts.spam ? [entry('isSpam')] : [],
  });
  f.chain.setCustody(fid, custody.address);
  return { name, fid, custody, listed };
}

/** The "Sign in with Farcaster" page link of a /verify reply (as PUBLIC_URL names it). */
export function farcasterLinkOf(reply: FakeMessage): string {
  const button = (reply.components?.[0] as { components: { url?: string; label?: string }[] } | undefined)
    ?.components[0];
  const url = button?.url ?? '';
  if (!url.startsWith(`${PUBLIC_URL}/farcaster/`) || button?.label !== 'Sign in with Farcaster')
    throw new Error(`no Sign in with Farcaster link in the reply: ${seen(reply)}`);
  return url;
}

/** A browser that reaches PUBLIC_URL at the bot's local server, signed in to Discord as `userId`. */
export function browserAs(f: FarcasterGating, userId: string): TestBrowser {
  f.g.h.discord.oauth.signInAs(userId);
  return new TestBrowser(PUBLIC_URL, () => f.g.gating.verifyUrl);
}

/** Presses the page's "Show the approval link" (the form POST), following the redirect back to the page. */
export async function startOnPage(browser: TestBrowser, link: string): Promise<Visit> {
  return browser.open(`${link}/start`, { method: 'POST' });
}

/** The relay channel the bot opened last (after `startOnPage`). */
export function openedChannel(f: FarcasterGating): FakeChannel {
  const channel = f.relay.lastChannel();
  if (!channel) throw new Error('the bot opened no relay channel');
  return channel;
}

/** The member's Farcaster app approves the channel (with `approval`'s overrides). */
export async function approveAs(
  f: FarcasterGating,
  account: FarcasterAccount,
  more: Partial<Approval> = {},
): Promise<FakeChannel> {
  return f.relay.approve(openedChannel(f).token, { account: account.custody, fid: account.fid, ...more });
}

/** Reloads the page until its title is `title` (the server reads the relay on each load). */
export async function pageUntil(
  browser: TestBrowser,
  link: string,
  title: string,
  timeoutMs = 5_000,
): Promise<Visit> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const visit = await browser.open(link);
    if (titleOf(visit) === title) return visit;
    if (Date.now() > deadline)
      throw new Error(`page title stayed "${titleOf(visit)}" (status ${visit.status})`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export function titleOf(visit: Visit): string {
  return /<h1>([^<]*)<\/h1>/.exec(visit.text)?.[1] ?? '';
}

/** The member's Linked Roles connection is the FID's (human, not spam), and so is the app-wide holding, by signature. */
export async function expectConnectedByFid(f: FarcasterGating, userId: string, fid: number): Promise<void> {
  expect(f.g.h.discord.oauth.roleConnections.get(userId)).toMatchObject({
    platform_username: `farcaster,#${fid}`,
    metadata: { likely_human: '1', not_spam: '1' },
  });
  expect(await f.g.gating.store.getHolding('0', 'identity', `farcaster,#${fid}`)).toMatchObject({
    userId,
    proofMethod: 'signature',
  });
}
