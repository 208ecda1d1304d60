/**
 * Regenerate the README screenshots: `node scripts/screenshots.ts [--only lookup|gating]`. Runs
 * `npm run preview`'s code against the stand-in Web3.bio (in-process), writes each page with offline
 * images, and photographs the message with Debian's Chromium into docs/screenshots/. The role-gating
 * shots render hand-built domain objects through the gating renderers, the signing page and the Linked
 * Roles page; the wallet shots run the real verify server in process with two test wallets. Needs
 * /usr/bin/chromium; uses no network.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { MessageFlags } from 'discord-api-types/v10';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { privateKeyToAccount } from 'viem/accounts';
import { startFakeWeb3Bio } from '../fakes/web3bio/server.ts';
import { runPreview } from '../src/cli/preview.ts';
import { type PreviewMessage, previewPage } from '../src/cli/previewHtml.ts';
import { identityChoices } from '../src/discord/identityChoices.ts';
import { roleConnectionFor } from '../src/gating/linkedRoles/linkedRoles.ts';
import { LINKED_ROLES_SCOPE } from '../src/gating/proofs/challengeMessage.ts';
import { createChallenge } from '../src/gating/proofs/siwe.ts';
import { roleProblems } from '../src/gating/roles/hierarchy.ts';
import { rulesOfRows } from '../src/gating/rules/roleRules.ts';
import { diffRoles, evaluateRules, type GatingRules } from '../src/gating/rules/rules.ts';
import type { GuildStatus, MemberReport } from '../src/gating/types.ts';
import { renderProofChoices, withProofsField } from '../src/render/accountProofs.ts';
import { renderStatus } from '../src/render/gatingGuild.ts';
import type { GuildNames } from '../src/render/gatingLabels.ts';
import { renderVerifyResult } from '../src/render/gatingMember.ts';
import { renderVerifyPanel } from '../src/render/gatingPanel.ts';
import { renderMemberReport, renderWhoami } from '../src/render/gatingReport.ts';
import { renderRuleList } from '../src/render/gatingRule.ts';
import type { MessagePayload, RenderContext } from '../src/render/types.ts';
import { openSqliteStore } from '../src/store/sqliteStore.ts';
import type { FarcasterFlow, GuildSettings, LinkRecord, NonceRecord } from '../src/store/types.ts';
import { type FarcasterPageInput, renderFarcasterPage } from '../src/web/pages/farcasterPage.ts';
import { type LinkedRolePage, renderLinkedRolePage } from '../src/web/pages/linkedRolePage.ts';
import { renderVerifyPage, type VerifyPageState } from '../src/web/pages/verifyPage.ts';
import { startWebServer } from '../src/web/server.ts';
import type { CredentialSet } from '../src/web3bio/types.ts';
import { installEvmWallets } from '../test/gating/testWallets.ts';
import { holdingsDryRun } from './holdingShots.ts';

/** The languages the docs show /creds and /gating rule list in, beside English. */
const PREVIEW_LOCALES = ['de', 'fr', 'ja', 'ru'] as const;

/** Each README image: its file name and the preview command line that makes it. */
export const SCREENSHOTS = [
  { name: 'whois-vitalik', args: ['whois', 'identity=vitalik.eth'] },
  { name: 'whois-hostile', args: ['whois', 'identity=hostile.eth'] },
  { name: 'creds-spammer', args: ['creds', 'identity=spammer.eth'] },
  { name: 'domain-expiring', args: ['domain', 'name=expiring.eth'] },
  { name: 'avatar-vitalik', args: ['avatar', 'identity=vitalik.eth'] },
  { name: 'error-invalid-identity', args: ['whois', 'identity=../../x'] },
  { name: 'whois-vitalik-de', args: ['whois', 'identity=vitalik.eth', '--locale', 'de'] },
  { name: 'whois-vitalik-ja', args: ['whois', 'identity=vitalik.eth', '--locale', 'ja'] },
  ...PREVIEW_LOCALES.map((locale) => ({
    name: `creds-spammer-${locale}`,
    args: ['creds', 'identity=spammer.eth', '--locale', locale],
  })),
] as const;

const GROUPS = ['lookup', 'gating'] as const;
type Group = (typeof GROUPS)[number];

const OUT_DIR = join(import.meta.dirname, '..', 'docs', 'screenshots');
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

// The gating shots are built by hand, so they can be pinned to one moment: regenerating them changes no pixel.
const GATING_NOW_MS = Date.UTC(2026, 10, 22, 14, 5);
const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;
const RENDER: RenderContext = {
  locale: 'en-US',
  nowSec: GATING_NOW_MS / 1000,
  ipfsGateway: 'https://ipfs.io',
};

const GUILD_ID = '1187654321098765432';
const MEMBER_ID = '283746529183746528';
const VITALIK = { identity: 'vitalik.eth', address: '0xd8da6bf26964af9d7eed9e03e53415d37aa96045' };
const NONCE = '9f4c2b7e1a6d48c3b05e7f21d9a8c634';
const SOLANA_ADDRESS = 'HN7cABqLq46Es1jh92dQQisAq662SmxELLLsHHe4YWrH';
const ROLES = {
  human: { id: '1187654321098765501', name: 'Verified Human', position: 9 },
  spam: { id: '1187654321098765502', name: 'Spam Flagged', position: 3 },
  risky: { id: '1187654321098765503', name: 'Risky Wallet', position: 2 },
  bot: { id: '1187654321098765504', name: 'Web3.bio Bot', position: 8 },
};
const LOG_CHANNEL = { id: '1187654321098765601', name: 'gating-log' };
const NAMES: GuildNames = {
  roles: new Map(Object.values(ROLES).map((role) => [role.id, role.name])),
  channels: new Map([[LOG_CHANNEL.id, LOG_CHANNEL.name]]),
  users: new Map([[MEMBER_ID, 'vitalik']]),
  usernames: new Map([[MEMBER_ID, 'vitalik']]),
};
const RULES: GatingRules = {
  humanRoleId: ROLES.human.id,
  spamRoleId: ROLES.spam.id,
  riskyRoleId: ROLES.risky.id,
  minScore: null,
  spamRemovesHuman: true,
};
const SETTINGS: GuildSettings = {
  guildId: GUILD_ID,
  enabled: true,
  ...RULES,
  logChannelId: LOG_CHANNEL.id,
  lastFullSyncAt: GATING_NOW_MS - 6 * HOUR_MS,
  updatedAt: GATING_NOW_MS - 14 * DAY_MS,
};
const CREDENTIALS: CredentialSet = {
  isHuman: [
    {
      id: `ens,${VITALIK.identity}`,
      platform: 'dentity',
      category: 'isHuman',
      source: 'dentity',
      type: 'boolean',
      value: 'true',
      label: 'Dentity Humanity Verified',
      description: 'Personhood Verified by Dentity',
      link: null,
      updatedAt: Math.floor((GATING_NOW_MS - 40 * DAY_MS) / 1000),
      expiredAt: null,
    },
  ],
  isRisky: [],
  isSpam: [],
};

const RULE_ROLES = {
  tier20: { id: '1187654321098765511', name: 'Passport 20+' },
  tier30: { id: '1187654321098765512', name: 'Passport 30+' },
  og: { id: '1187654321098765513', name: 'OG Name Holder' },
  caster: { id: '1187654321098765514', name: 'Farcaster Voice' },
};
const RULE_NAMES: GuildNames = {
  ...NAMES,
  roles: new Map([...NAMES.roles, ...Object.values(RULE_ROLES).map((r) => [r.id, r.name] as const)]),
};
/** The role rules of `/gating rule list`, as the store would give them back. */
const ROLE_RULES = rulesOfRows([
  { roleId: RULE_ROLES.tier20.id, condition: 'score:20', match: 'all' },
  { roleId: RULE_ROLES.tier30.id, condition: 'score:30', match: 'all' },
  { roleId: RULE_ROLES.og.id, condition: 'name-age:730', match: 'all' },
  { roleId: RULE_ROLES.og.id, condition: 'name-expiry:90', match: 'all' },
  { roleId: RULE_ROLES.caster.id, condition: 'followers:farcaster:1000', match: 'any' },
  { roleId: RULE_ROLES.caster.id, condition: 'followers:lens:1000', match: 'any' },
]);

/** A gating message: the reply it photographs and the slash command shown above it. */
interface GatingMessageShot {
  name: string;
  command: string;
  render: () => MessagePayload;
  /** A message posted in the channel (the verify panel), not a private answer. */
  posted?: boolean;
}

/** The role-gating images made from bot messages; the signing page is `verify-page`. */
export const GATING_SCREENSHOTS: readonly GatingMessageShot[] = [
  {
    name: 'verify-reply',
    command: '/verify',
    render: () =>
      renderVerifyResult(
        {
          kind: 'challenge',
          url: `https://bot.example.org/verify/${NONCE}`,
          expiresAt: GATING_NOW_MS + 10 * MINUTE_MS,
          address: VITALIK.address,
        },
        VITALIK.identity,
        NAMES,
        RENDER,
      ),
  },
  {
    name: 'verify-farcaster-reply',
    command: '/verify',
    render: () =>
      renderVerifyResult(
        {
          kind: 'farcaster',
          url: `https://bot.example.org/farcaster/${NONCE}`,
          expiresAt: GATING_NOW_MS + 10 * MINUTE_MS,
          fid: 3,
        },
        'dwr.farcaster',
        NAMES,
        RENDER,
      ),
  },
  {
    name: 'gating-check',
    command: '/gating check',
    render: () => renderMemberReport(memberReport(), NAMES, RENDER),
  },
  {
    name: 'gating-status',
    command: '/gating status',
    render: () => renderStatus(guildStatus(), NAMES, RENDER),
  },
  {
    name: 'gating-rules',
    command: '/gating rule list',
    render: () => renderRuleList(ROLE_RULES, RULE_NAMES, RENDER),
  },
  ...PREVIEW_LOCALES.map((locale) => ({
    name: `gating-rules-${locale}`,
    command: '/gating rule list',
    render: () => renderRuleList(ROLE_RULES, RULE_NAMES, { ...RENDER, locale }),
  })),
  {
    name: 'gating-rule-holdings',
    command: '/gating rule add',
    render: () => holdingsDryRun(RULE_NAMES, RENDER),
  },
  {
    name: 'verify-use-here',
    command: '/verify',
    render: () =>
      renderProofChoices(
        [
          { identity: VITALIK.address, subject: VITALIK.address },
          { identity: 'dwr.farcaster', subject: 'farcaster,#3' },
        ],
        { use: (subject) => `verify|use|${subject}`, prove: 'verify|prove' },
        RENDER,
      ),
  },
  {
    name: 'whoami-proofs',
    command: '/whoami',
    render: () =>
      withProofsField(
        renderWhoami(memberReport(), NAMES, RENDER),
        [
          { proof: { identity: VITALIK.address }, servers: ['Web3 Builders', 'ENS Community'] },
          { proof: { identity: 'dwr.farcaster' }, servers: [] },
        ],
        false,
        RENDER,
      ),
  },
  {
    name: 'gating-panel',
    command: '/gating panel',
    render: () => renderVerifyPanel({ verify: 'verify|panel', status: 'whoami|panel' }, RENDER),
    posted: true,
  },
];

/** vitalik.eth proven by signature, its isHuman credential earning the human role it does not hold yet. */
function memberReport(): MemberReport {
  const link: LinkRecord = {
    guildId: GUILD_ID,
    userId: MEMBER_ID,
    identity: VITALIK.identity,
    platform: 'ens',
    address: VITALIK.address,
    proofMethod: 'signature',
    provenAt: GATING_NOW_MS - 3 * DAY_MS,
    lastCheckAt: GATING_NOW_MS - 2 * HOUR_MS,
    lastCheckOk: true,
    lastResult: CREDENTIALS,
    releasedAt: null,
  };
  const evidence = [{ identity: VITALIK.identity, credentials: CREDENTIALS }];
  const decisions = evaluateRules(RULES, evidence, RENDER.nowSec);
  const currentRoleIds: string[] = [];
  return {
    userId: MEMBER_ID,
    links: [link],
    evidence,
    decisions,
    currentRoleIds,
    diff: diffRoles(decisions, new Set(currentRoleIds)),
    released: [],
    pendingRemovals: [],
    blockedRoleIds: [],
  };
}

/** Everything in place except one role sitting above the bot's own. */
function guildStatus(): GuildStatus {
  const { bot, ...gated } = ROLES;
  const problems = roleProblems({
    guildId: GUILD_ID,
    roleIds: Object.values(gated).map((role) => role.id),
    roles: new Map(
      Object.values(ROLES).map((role) => [role.id, { ...role, managed: false, permissions: 0n }]),
    ),
    botHighestPosition: bot.position,
    botCanManageRoles: true,
  });
  return {
    enabled: true,
    settings: SETTINGS,
    manageRoles: true,
    guildMembersIntent: true,
    problems,
    lastFullSyncAt: SETTINGS.lastFullSyncAt,
    signingLinksBound: true,
    queueLength: 0,
    linkedMembers: 1284,
    blockedRoleIds: [],
    heldRemovals: 0,
  };
}

/** The nonce a `/verify` for vitalik.eth stores, as the signing page receives it. */
function verifyRecord(): NonceRecord {
  return {
    nonce: NONCE,
    guildId: GUILD_ID,
    userId: MEMBER_ID,
    userName: 'vitalik_fan',
    guildName: 'Web3 Lounge',
    identity: VITALIK.identity,
    address: VITALIK.address,
    expiresAt: GATING_NOW_MS + 10 * MINUTE_MS,
    usedAt: null,
    failedAttempts: 0,
  };
}

/** A `/verify dwr.farcaster` flow as its page shows it, in `state` (its approval link, the relay's form). */
function farcasterFlow(
  state: FarcasterFlow['state'],
  outcome: FarcasterFlow['outcome'] = null,
): FarcasterFlow {
  return {
    ...verifyRecord(),
    identity: 'dwr.farcaster',
    fid: 3,
    createdAt: GATING_NOW_MS,
    state,
    channelToken: null,
    channelUrl: state === 'open' ? 'https://farcaster.xyz/~/siwf?channelToken=QF7K2M9X' : null,
    signer: null,
    authMethod: null,
    outcome,
    refusals: state === 'refused' ? 1 : 0,
    updatedAt: GATING_NOW_MS,
  };
}

/**
 * The Sign in with Farcaster page for a state. Its script asks a `data:` URL that answers the state shown,
 * so the offline page waits quietly as a member's would.
 */
const farcasterPage =
  (flow: FarcasterFlow, more: Partial<FarcasterPageInput> = {}) =>
  () => {
    const self = `/farcaster/${NONCE}`;
    const status = `data:application/json,${encodeURIComponent(JSON.stringify({ state: `${flow.state}.${flow.refusals}` }))}`;
    return renderFarcasterPage(
      {
        flow,
        domain: 'bot.example.org',
        paths: { self, start: `${self}/start`, status },
        canStart: true,
        ...more,
      },
      'screenshot',
    );
  };

/** A page state photographed from its HTML (`ready`: wait for the signing script to show its button). */
interface PageShot {
  name: string;
  what: string;
  html: () => string;
  ready?: boolean;
}

const verifyPage = (state: VerifyPageState) => () => renderVerifyPage(state, 'screenshot');
const linkedRolePage = (state: LinkedRolePage) => () => renderLinkedRolePage(state, 'screenshot');
const LINKED_START = '/linked-role';

/** The signing page's other states, and every state of the Linked Roles page (PUBLIC_URL/linked-role). */
export const PAGE_SHOTS: readonly PageShot[] = [
  {
    name: 'farcaster-page',
    what: 'Sign in with Farcaster, ready to start',
    html: farcasterPage(farcasterFlow('new')),
  },
  {
    name: 'farcaster-page-waiting',
    what: 'Sign in with Farcaster, the approval link and its QR code',
    html: farcasterPage(farcasterFlow('open')),
  },
  {
    name: 'farcaster-page-refused',
    what: 'Sign in with Farcaster, an approval by another FID refused',
    html: farcasterPage(farcasterFlow('refused', { reason: 'wrong_fid' })),
  },
  {
    name: 'verify-page-solana',
    what: 'signing page, a Solana wallet',
    html: verifyPage({
      kind: 'ready',
      record: { ...verifyRecord(), identity: 'bonfida.sol', address: SOLANA_ADDRESS },
    }),
    ready: true,
  },
  {
    name: 'verify-page-wrong-account',
    what: 'another Discord account opened the link',
    html: verifyPage({ kind: 'wrong_account', expected: '@alice', actual: '@mallory' }),
  },
  {
    name: 'verify-page-sign-in-cancelled',
    what: 'Discord sign-in cancelled',
    html: verifyPage({
      kind: 'sign_in_failed',
      reason: 'denied',
      retryUrl: `https://verify.example.org/verify/${NONCE}`,
    }),
  },
  {
    name: 'verify-page-sign-in-replayed',
    what: 'a replayed or expired Discord sign-in',
    html: verifyPage({ kind: 'sign_in_failed', reason: 'bad_state', retryUrl: null }),
  },
  {
    name: 'verify-page-other-browser',
    what: 'the sign-in finished in another browser',
    html: verifyPage({ kind: 'sign_in_failed', reason: 'other_browser', retryUrl: null }),
  },
  { name: 'verify-page-used', what: 'signing link already used', html: verifyPage({ kind: 'used' }) },
  { name: 'verify-page-expired', what: 'signing link expired', html: verifyPage({ kind: 'expired' }) },
  {
    name: 'linked-role-choose',
    what: 'Linked Roles: signed in, choose a proof',
    html: linkedRolePage({ kind: 'prove', username: 'vitalik_fan' }),
  },
  {
    name: 'linked-role-sign',
    what: 'Linked Roles: the wallet signature step',
    html: verifyPage({
      kind: 'ready',
      record: { ...verifyRecord(), guildId: LINKED_ROLES_SCOPE, guildName: null },
    }),
    ready: true,
  },
  {
    name: 'linked-role-connected',
    what: 'Linked Roles: connected, with the metadata written to Discord',
    html: linkedRolePage({
      kind: 'connected',
      identity: VITALIK.identity,
      proof: 'signature',
      metadata: linkedMetadata(),
    }),
  },
  {
    name: 'linked-role-stale',
    what: 'Linked Roles: the connection went stale (app deauthorized)',
    html: linkedRolePage({
      kind: 'prove',
      username: 'vitalik_fan',
      current: { identity: VITALIK.identity, stale: true },
    }),
  },
  {
    name: 'linked-role-not-named',
    what: 'Linked Roles: refused, the record names someone else',
    html: linkedRolePage({
      kind: 'prove',
      username: 'vitalik_fan',
      problem: 'not_named',
      identity: VITALIK.identity,
    }),
  },
  {
    name: 'linked-role-other-account',
    what: 'Linked Roles: a signing link opened by another account',
    html: linkedRolePage({ kind: 'failed', reason: 'other_account', startUrl: LINKED_START }),
  },
  {
    name: 'linked-role-replayed',
    what: 'Linked Roles: a replayed or expired sign-in',
    html: linkedRolePage({ kind: 'failed', reason: 'bad_state', startUrl: LINKED_START }),
  },
  {
    name: 'linked-role-error',
    what: 'Linked Roles: Discord did not complete the request',
    html: linkedRolePage({ kind: 'failed', reason: 'failed', startUrl: LINKED_START }),
  },
];

/** What vitalik.eth's credentials write to Discord, through the bot's own mapping. */
function linkedMetadata(): Record<string, string> {
  const connection = roleConnectionFor({
    username: VITALIK.identity,
    evidence: [{ identity: VITALIK.identity, credentials: CREDENTIALS }],
    firstProvenAt: GATING_NOW_MS - 3 * DAY_MS,
    nowSec: RENDER.nowSec,
  });
  if (!connection) throw new Error('no metadata for the screenshot');
  return connection.metadata;
}

/** Which groups the command line asks for: both by default, one with `--only lookup|gating`. */
function selectedGroups(argv: readonly string[]): Group[] {
  const { values } = parseArgs({ args: [...argv], options: { only: { type: 'string' } }, strict: true });
  if (values.only === undefined) return [...GROUPS];
  const only = GROUPS.find((group) => group === values.only);
  if (!only) throw new Error(`--only takes ${GROUPS.join(' or ')}, got "${values.only}"`);
  return [only];
}

/** A browser context whose pages must be complete offline: any request that leaves them is refused and noted. */
async function offlineContext(
  browser: Browser,
  viewport: { width: number; height: number },
  leaks: string[],
): Promise<BrowserContext> {
  const context = await browser.newContext({
    viewport,
    deviceScaleFactor: 1,
    locale: 'en-US',
    timezoneId: 'UTC',
  });
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith('file:') || url.startsWith('data:')) return route.continue();
    leaks.push(url);
    return route.abort();
  });
  return context;
}

/** Opens `html`, lets `shoot` photograph it, and fails on any script error or console error. */
async function photograph(
  context: BrowserContext,
  name: string,
  html: string,
  shoot: (page: Page) => Promise<void>,
): Promise<void> {
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') problems.push(message.text());
  });
  await page.goto(pathToFileURL(html).href);
  await shoot(page);
  await page.close();
  if (problems.length > 0) throw new Error(`${name}: page errors:\n${problems.join('\n')}`);
}

async function shootMessage(page: Page, file: string): Promise<void> {
  await page.waitForFunction(() => customElements.get('discord-message') !== undefined);
  await page.evaluate(() => document.fonts.ready.then(() => undefined));
  await page.locator('discord-messages').screenshot({ path: file, animations: 'disabled' });
}

async function lookupShots(context: BrowserContext, work: string): Promise<void> {
  const fake = await startFakeWeb3Bio();
  try {
    const env = { WEB3BIO_API_URL: fake.url, WEB3BIO_RATE_LIMIT: 'off' };
    for (const shot of SCREENSHOTS) {
      const html = join(work, `${shot.name}.html`);
      const errors: string[] = [];
      const code = await runPreview([...shot.args, '--html', html, '--offline-images'], env, {
        out: () => {},
        err: (text) => errors.push(text),
      });
      if (code !== 0) throw new Error(`preview ${shot.args.join(' ')} exited ${code}: ${errors.join('\n')}`);
      await photograph(context, shot.name, html, (page) =>
        shootMessage(page, join(OUT_DIR, `${shot.name}.png`)),
      );
      console.log(`docs/screenshots/${shot.name}.png  (${shot.args.join(' ')})`);
    }
  } finally {
    await fake.close();
  }
}

/**
 * Autocomplete while a member types `vit` in /whois's identity option: the bot's own choices
 * (identityChoices, fed what it would remember after a few lookups), drawn as Discord lists them.
 */
async function autocompleteShot(context: BrowserContext, work: string): Promise<void> {
  const choices = identityChoices('vit', {
    recent: ['vitalik.eth', 'vitalik.farcaster'],
    proven: [],
    server: ['vitalik.lens', 'vitaliknotes.eth'],
  });
  const rows = choices
    .map((choice) => `<li>${choice.name.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`)}</li>`)
    .join('');
  const html = join(work, 'autocomplete.html');
  await writeFile(
    html,
    `<!doctype html><meta charset="utf-8"><style>
body{margin:0;background:#313338;font:15px/1.3 "gg sans","Noto Sans",sans-serif;color:#dbdee1}
.box{width:560px;padding:12px}
.head{color:#b5bac1;font-size:12px;font-weight:700;text-transform:uppercase;padding:8px 12px}
ul{list-style:none;margin:0;padding:4px 0;background:#2b2d31;border-radius:8px}
li{padding:8px 12px}
li:first-child{background:#404249;border-radius:4px;color:#fff}
.input{margin-top:8px;background:#383a40;border-radius:8px;padding:11px 16px;color:#dbdee1}
.opt{background:#1e1f22;border-radius:4px;padding:2px 6px;margin-right:6px;color:#b5bac1}
</style><div class="box"><div class="head">identity</div><ul>${rows}</ul>
<div class="input">/whois <span class="opt">identity</span>vit</div></div>`,
  );
  await photograph(context, 'autocomplete', html, async (page) => {
    await page
      .locator('.box')
      .screenshot({ path: join(OUT_DIR, 'autocomplete-whois.png'), animations: 'disabled' });
  });
  console.log('docs/screenshots/autocomplete-whois.png  (identityChoices for "vit")');
}

async function gatingShots(
  browser: Browser,
  messages: BrowserContext,
  pages: BrowserContext,
  work: string,
): Promise<void> {
  const verifyHtml = join(work, 'verify-page.html');
  await writeFile(verifyHtml, renderVerifyPage({ kind: 'ready', record: verifyRecord() }, 'screenshot'));
  await photograph(pages, 'verify-page', verifyHtml, async (page) => {
    // The signing script reveals the button once it runs; wait for that, as a member's browser would show it.
    await page.locator('#sign').waitFor({ state: 'visible' });
    await page.screenshot({ path: join(OUT_DIR, 'verify-page.png'), fullPage: true, animations: 'disabled' });
  });
  console.log('docs/screenshots/verify-page.png  (signing page, ready)');

  for (const shot of PAGE_SHOTS) {
    const html = join(work, `${shot.name}.html`);
    await writeFile(html, shot.html());
    await photograph(pages, shot.name, html, async (page) => {
      if (shot.ready) await page.locator('#sign').waitFor({ state: 'visible' });
      await page.screenshot({
        path: join(OUT_DIR, `${shot.name}.png`),
        fullPage: true,
        animations: 'disabled',
      });
    });
    console.log(`docs/screenshots/${shot.name}.png  (${shot.what})`);
  }
  await walletShots(browser);

  for (const shot of GATING_SCREENSHOTS) {
    // Every gating answer is ephemeral, as the commands send it; the panel is a message in the channel.
    const message: PreviewMessage = shot.posted
      ? shot.render()
      : { ...shot.render(), flags: MessageFlags.Ephemeral };
    const html = join(work, `${shot.name}.html`);
    const page = await previewPage(message, {
      command: shot.command,
      locale: RENDER.locale,
      nowSec: RENDER.nowSec,
      timeZone: 'UTC',
      offlineImages: true,
    });
    await writeFile(html, page);
    await photograph(messages, shot.name, html, (p) => shootMessage(p, join(OUT_DIR, `${shot.name}.png`)));
    console.log(`docs/screenshots/${shot.name}.png  (${shot.command})`);
  }
}

/** Fixed keys, so that regenerating the wallet shots changes no pixel. */
const SHOT_WALLET = privateKeyToAccount(`0x${'42'.repeat(32)}`);
const SHOT_OTHER_WALLET = privateKeyToAccount(`0x${'17'.repeat(32)}`);

/**
 * The signing page's script states, from the real verify server (in process, clock pinned) and two
 * EIP-6963 test wallets: the member picks one, then the signature is checked and accepted.
 */
async function walletShots(browser: Browser): Promise<void> {
  const store = await openSqliteStore(':memory:');
  const siwe = { publicUrl: 'https://verify.example.org', now: () => GATING_NOW_MS };
  const server = await startWebServer({
    port: 0,
    host: '127.0.0.1',
    store,
    siwe,
    onVerified: async () => ({ ok: true }),
  });
  const context = await browser.newContext({
    viewport: { width: 900, height: 200 },
    deviceScaleFactor: 1,
    locale: 'en-US',
    timezoneId: 'UTC',
  });
  try {
    const leaks: string[] = [];
    await context.route('**/*', (route) => {
      if (route.request().url().startsWith(server.url)) return route.continue();
      leaks.push(route.request().url());
      return route.abort();
    });
    await installEvmWallets(context, {
      announced: [
        { name: 'Rabby Wallet', account: SHOT_OTHER_WALLET },
        { name: 'MetaMask', account: SHOT_WALLET },
      ],
    });
    const challenge = await createChallenge(store, siwe, {
      guildId: GUILD_ID,
      userId: MEMBER_ID,
      userName: 'vitalik_fan',
      guildName: 'Web3 Lounge',
      identity: VITALIK.identity,
      address: SHOT_WALLET.address,
    });
    const page = await context.newPage();
    await page.goto(`${server.url}/verify/${challenge.nonce}`);
    await page.getByRole('button', { name: 'Connect wallet and sign' }).click();
    await page.getByRole('button', { name: 'MetaMask' }).waitFor();
    await page.screenshot({ path: join(OUT_DIR, 'verify-page-pick-wallet.png'), fullPage: true });
    console.log('docs/screenshots/verify-page-pick-wallet.png  (signing page, several wallets)');
    await page.getByRole('button', { name: 'MetaMask' }).click();
    await page.getByRole('status').getByText('Verified.').waitFor();
    await page.screenshot({ path: join(OUT_DIR, 'verify-page-verified.png'), fullPage: true });
    console.log('docs/screenshots/verify-page-verified.png  (signing page, signature accepted)');
    if (leaks.length > 0) throw new Error(`wallet shots tried to reach the network:\n${leaks.join('\n')}`);
  } finally {
    await context.close();
    await server.close();
    await store.close();
  }
}

async function main(argv: readonly string[]): Promise<void> {
  const groups = selectedGroups(argv);
  // Dates in the images should not depend on where they were taken.
  process.env.TZ = 'UTC';
  await mkdir(OUT_DIR, { recursive: true });
  const work = await mkdtemp(join(tmpdir(), 'preview-shots-'));
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
  try {
    const leaks: string[] = [];
    const messages = await offlineContext(browser, { width: 800, height: 600 }, leaks);
    if (groups.includes('lookup')) {
      await lookupShots(messages, work);
      await autocompleteShot(messages, work);
    }
    if (groups.includes('gating')) {
      // Short, so that the full-page shot ends where the page does rather than at the viewport's bottom.
      const pages = await offlineContext(browser, { width: 900, height: 200 }, leaks);
      await gatingShots(browser, messages, pages, work);
    }
    if (leaks.length > 0) throw new Error(`pages tried to reach the network:\n${leaks.join('\n')}`);
  } finally {
    await browser.close();
    await rm(work, { recursive: true, force: true });
  }
}

if (import.meta.main) await main(process.argv.slice(2));
