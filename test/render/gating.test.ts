import { beforeAll, describe, expect, it } from 'vitest';
import type { RoleProblem } from '../../src/gating/roles/hierarchy.ts';
import type { UncountedCredential } from '../../src/gating/rules/credentialSubjects.ts';
import type { GuildPreview, GuildStatus, MemberReport } from '../../src/gating/types.ts';
import { registerCatalog } from '../../src/i18n/index.ts';
import {
  renderDisabled,
  renderGatedRolesRefused,
  renderGuildRecheck,
  renderNeedsManageRoles,
  renderPreview,
  renderRules,
  renderSetupResult,
  renderStatus,
} from '../../src/render/gatingGuild.ts';
import type { GuildNames } from '../../src/render/gatingLabels.ts';
import { renderUnverified, renderVerifyResult, SIGNING_PROMISE } from '../../src/render/gatingMember.ts';
import { renderMemberRecheck, renderMemberReport, renderWhoami } from '../../src/render/gatingReport.ts';
import type { MessagePayload } from '../../src/render/types.ts';
import type { GuildSettings, LinkRecord } from '../../src/store/types.ts';
import type { CredentialSet } from '../../src/web3bio/types.ts';
import { PSEUDO, pseudoCatalog } from '../i18n/pseudo.ts';
import { credential, ctx, HOSTILE, NOW_SEC } from './fixtures.ts';
import { assertWithinDiscordLimits, visibleText } from './limits.ts';

const HUMAN = '1000000000000000001';
const SPAM = '1000000000000000002';
const RISKY = '1000000000000000003';
const LOG = '1000000000000000010';
const USER = '2000000000000000001';
const NOW_MS = NOW_SEC * 1000;

const names: GuildNames = {
  roles: new Map([
    [HUMAN, 'Verified Human'],
    [SPAM, 'Spam'],
  ]),
  channels: new Map([[LOG, 'gating-log']]),
  users: new Map([[USER, 'alice']]),
  usernames: new Map([[USER, 'alice']]),
};

const hostileNames: GuildNames = {
  roles: new Map([
    [HUMAN, HOSTILE],
    [SPAM, '@everyone'],
  ]),
  channels: new Map([[LOG, HOSTILE]]),
  users: new Map([[USER, HOSTILE]]),
  usernames: new Map([[USER, HOSTILE]]),
};

function checked(payload: MessagePayload): MessagePayload {
  assertWithinDiscordLimits(payload);
  return payload;
}

function humanSet(): CredentialSet {
  return { isHuman: [credential({ label: 'Gitcoin Passport' })], isRisky: [], isSpam: [] };
}

function link(overrides: Partial<LinkRecord> = {}): LinkRecord {
  return {
    guildId: '3000000000000000001',
    userId: USER,
    identity: 'alice.eth',
    platform: 'ens',
    address: '0xd8da6bf26964af9d7eed9e03e53415d37aa96045',
    proofMethod: 'record',
    provenAt: NOW_MS - 3_600_000,
    lastCheckAt: NOW_MS - 60_000,
    lastCheckOk: true,
    lastResult: humanSet(),
    releasedAt: null,
    ...overrides,
  };
}

function settings(overrides: Partial<GuildSettings> = {}): GuildSettings {
  return {
    guildId: '3000000000000000001',
    enabled: true,
    humanRoleId: HUMAN,
    spamRoleId: SPAM,
    riskyRoleId: null,
    minScore: 20,
    spamRemovesHuman: true,
    logChannelId: LOG,
    lastFullSyncAt: NOW_MS - 7_200_000,
    updatedAt: NOW_MS,
    ...overrides,
  };
}

function report(overrides: Partial<MemberReport> = {}): MemberReport {
  return {
    userId: USER,
    links: [link()],
    evidence: [{ identity: 'alice.eth', credentials: humanSet() }],
    decisions: [
      { roleId: HUMAN, want: true, because: 'isHuman: Gitcoin Passport (alice.eth)' },
      { roleId: SPAM, want: false, because: 'no unexpired isSpam flag (alice.eth)' },
    ],
    released: [],
    pendingRemovals: [],
    blockedRoleIds: [],
    currentRoleIds: [SPAM],
    diff: {
      add: [{ roleId: HUMAN, because: 'isHuman: Gitcoin Passport (alice.eth)' }],
      remove: [{ roleId: SPAM, because: 'no unexpired isSpam flag (alice.eth)' }],
    },
    ...overrides,
  };
}

const problem: RoleProblem = {
  roleId: HUMAN,
  roleName: 'Verified Human',
  problem: 'above_bot',
};

describe('renderVerifyResult', () => {
  const challenge = {
    kind: 'challenge' as const,
    url: 'https://bot.example.org/verify/0123456789abcdef0123456789abcdef',
    expiresAt: NOW_MS + 600_000,
    address: '0xd8da6bf26964af9d7eed9e03e53415d37aa96045',
  };

  it('answers a challenge with a link button, the relative expiry and the no-transaction promise', () => {
    const payload = checked(renderVerifyResult(challenge, 'alice.eth', names, ctx()));
    const button = payload.components[0]?.components[0];
    expect(button).toMatchObject({ type: 2, style: 5, url: challenge.url, label: 'Open the signing page' });
    const text = visibleText(payload);
    expect(text).toContain(`<t:${NOW_SEC + 600}:R>`);
    expect(text).toContain(SIGNING_PROMISE);
    expect(text).toMatch(/never asks for a transaction.*seed phrase/);
    expect(text).toContain('`0xd8da6bf26964af9d7eed9e03e53415d37aa96045`');
    expect(text).toContain('**alice.eth**');
  });

  it('drops a signing URL that is not http(s) rather than linking it', () => {
    const payload = checked(
      renderVerifyResult({ ...challenge, url: 'javascript:alert(1)' }, 'alice.eth', names, ctx()),
    );
    expect(payload.components).toEqual([]);
    expect(visibleText(payload)).not.toContain('javascript:');
  });

  it('lists the role changes of a record-proven link by role name', () => {
    const payload = checked(
      renderVerifyResult(
        { kind: 'linked', link: link(), diff: report().diff, moved: false, blockedRoleIds: [] },
        'alice.eth',
        names,
        ctx(),
      ),
    );
    const text = visibleText(payload);
    expect(payload.embeds[0]?.title).toBe('Verified');
    expect(text).toContain('➕ **Verified Human**: isHuman: Gitcoin Passport \\(alice.eth\\)');
    expect(text).toContain('➖ **Spam**');
  });

  it('says so when a linked identity changes no role', () => {
    const payload = checked(
      renderVerifyResult(
        { kind: 'linked', link: link(), diff: { add: [], remove: [] }, moved: false, blockedRoleIds: [] },
        'alice.eth',
        names,
        ctx(),
      ),
    );
    expect(visibleText(payload)).toContain('Your roles already match');
  });

  it('never says the roles match when the sync after the proof failed: they follow later', () => {
    const payload = checked(
      renderVerifyResult(
        {
          kind: 'linked',
          link: link(),
          diff: { add: [], remove: [] },
          moved: false,
          blockedRoleIds: [],
          rolesLater: true,
        },
        'alice.eth',
        names,
        ctx(),
      ),
    );
    const text = visibleText(payload);
    expect(text).not.toContain('already match');
    expect(text).toContain(
      'Your roles could not be updated just now: the bot will do it shortly, by itself.',
    );
  });

  it('shows a refusal reason, escaped', () => {
    const payload = checked(
      renderVerifyResult(
        { kind: 'refused', refusal: { code: 'not_found', identity: HOSTILE } },
        HOSTILE,
        names,
        ctx(),
      ),
    );
    expect(payload.embeds[0]?.title).toBe('❌ Not verified');
    expect(payload.components).toEqual([]);
  });
});

describe('renderWhoami', () => {
  it('shows each proven identity with its proof, verdict and last check, and why each gated role is held', () => {
    const payload = checked(renderWhoami(report(), names, ctx()));
    const embed = payload.embeds[0];
    const identityField = embed?.fields?.find((f) => f.name.startsWith('alice'));
    expect(identityField?.name).toBe('alice.eth · ENS');
    expect(identityField?.value).toContain('its own record names you');
    expect(identityField?.value).toContain(`<t:${NOW_SEC - 3600}:R>`);
    expect(identityField?.value).toContain('Likely human');
    const roles = embed?.fields?.find((f) => f.name === 'Gated roles: wanted vs held')?.value ?? '';
    expect(roles).toContain('**Verified Human**: ➕ wanted · not held yet');
    expect(roles).toContain('↳ isHuman: Gitcoin Passport \\(alice.eth\\)');
    expect(roles).toContain('**Spam**: ➖ not wanted · still held');
  });

  it('shows the Linked Roles connection, and warns when Discord refused it (stale)', () => {
    const live = visibleText(
      checked(renderWhoami(report(), names, ctx(), { identity: 'alice.eth', stale: false })),
    );
    expect(live).toContain('Connected as **alice.eth**');
    const stale = checked(
      renderWhoami(report({ links: [], evidence: [] }), names, ctx(), { identity: 'a*b_.eth', stale: true }),
    );
    const field = stale.embeds[0]?.fields?.find((f) => f.name === 'Linked Roles');
    expect(field?.value).toContain('Discord no longer accepts the connection to **a\\*b\\_.eth**');
    expect(field?.value).toContain('reconnect');
    expect(visibleText(checked(renderWhoami(report(), names, ctx())))).not.toContain('Linked Roles');
  });

  it('tells a member without a link how to start', () => {
    const payload = checked(renderWhoami(report({ links: [], evidence: [] }), names, ctx()));
    expect(payload.embeds[0]?.title).toBe('No proven identity');
    expect(visibleText(payload)).toContain('/verify');
  });

  it('says a failed lookup keeps the last known result', () => {
    const payload = checked(
      renderWhoami(
        report({
          links: [link({ lastCheckOk: false })],
          evidence: [{ identity: 'alice.eth', credentials: null }],
          decisions: [
            { roleId: HUMAN, want: null, because: 'lookup failed for alice.eth: keeping the current state' },
          ],
          currentRoleIds: [HUMAN],
        }),
        names,
        ctx(),
      ),
    );
    const text = visibleText(payload);
    expect(text).toContain('lookup failed: the last known result stands');
    expect(text).toContain('(lookup failed)');
    expect(text).toContain('⏸️ held, kept while the lookup fails');
  });
});

const WALLET = '0xcd133d337ead9c2ac799ec7524a1e0f8aa30c3b1';

function uncounted(over: Partial<UncountedCredential> = {}): UncountedCredential {
  return {
    category: 'isHuman',
    label: 'Galxe KYC Verified',
    source: 'galxe-passport',
    subject: WALLET,
    subjectKind: 'address',
    reason: 'address_not_proven',
    lookedUp: 'sub.alice.eth',
    signWith: WALLET,
    ...over,
  };
}

/** A record link of a subname whose wallet's credentials do not count. */
function borrowedReport(list: UncountedCredential[]): MemberReport {
  return report({
    links: [link({ identity: 'sub.alice.eth', address: WALLET })],
    evidence: [
      { identity: 'sub.alice.eth', credentials: { isHuman: [], isRisky: [], isSpam: [] }, uncounted: list },
    ],
    decisions: [
      { roleId: HUMAN, want: false, because: 'no unexpired isHuman credential is true (sub.alice.eth)' },
    ],
    currentRoleIds: [],
    diff: { add: [], remove: [] },
  });
}

const signId = (address: string) => `whoami|sign|${address}`;

describe('credentials that do not count', () => {
  it('/whoami says whose they are and why, and offers one button per wallet to sign with', () => {
    const payload = checked(
      renderWhoami(
        borrowedReport([
          uncounted(),
          uncounted({ label: 'Passport Humanity Verified', source: 'human-passport' }),
        ]),
        names,
        ctx(),
        undefined,
        signId,
      ),
    );
    const field = payload.embeds[0]?.fields?.find((f) => f.name.startsWith('sub.alice.eth'))?.value ?? '';
    expect(field).toContain('No signals that count');
    expect(field).toContain(
      '⚠️ Galxe KYC Verified and Passport Humanity Verified belong to wallet `0xcd13…c3b1`, which you have not proven: sign with that wallet to count them.',
    );
    expect(payload.components).toEqual([
      {
        type: 1,
        components: [
          { type: 2, style: 1, label: 'Sign with 0xcd13…c3b1', custom_id: `whoami|sign|${WALLET}` },
        ],
      },
    ]);
    expect(payload.embeds[0]?.description).toContain('the button below starts it');
  });

  it('without a button (preview, or past five wallets) the sentence names the command instead', () => {
    const wallets = Array.from({ length: 7 }, (_, i) => `0x${String(i + 1).padStart(40, '0')}`);
    const payload = checked(
      renderWhoami(
        borrowedReport(wallets.map((w) => uncounted({ subject: w, signWith: w }))),
        names,
        ctx(),
        undefined,
        signId,
      ),
    );
    expect(payload.components[0]?.components).toHaveLength(5);
    const text = visibleText(payload);
    expect(text).toContain(`sign with that wallet to count it (/verify \`${wallets[5]}\`)`);
    expect(text).not.toContain(`(/verify \`${wallets[0]}\`)`);
    expect(checked(renderWhoami(borrowedReport([uncounted()]), names, ctx())).components).toEqual([]);
  });

  it('a name not proven, and an entry Web3.bio names no subject for, each say what would count them', () => {
    const text = visibleText(
      checked(
        renderWhoami(
          borrowedReport([
            uncounted({
              subject: 'alice.eth',
              subjectKind: 'identity',
              reason: 'identity_not_proven',
              signWith: null,
            }),
            uncounted({
              label: 'Mystery',
              subject: 'sub.alice.eth',
              subjectKind: 'identity',
              reason: 'unknown_subject',
            }),
          ]),
          names,
          ctx(),
          undefined,
          signId,
        ),
      ),
    );
    expect(text).toContain(
      'Galxe KYC Verified belongs to **alice.eth**, which you have not proven here: run /verify `alice.eth` to count it.',
    );
    expect(text).toContain(
      'Web3.bio does not say whose Mystery is, and **sub.alice.eth** points at wallet `0xcd13…c3b1`, which you have not proven: sign with that wallet to count it.',
    );
  });

  it('a moderator’s check tells what the member can do, with no button', () => {
    const payload = checked(renderMemberReport(borrowedReport([uncounted()]), names, ctx()));
    expect(visibleText(payload)).toContain(
      `Galxe KYC Verified belongs to wallet \`0xcd13…c3b1\`, which the member has not proven: it counts once the member signs with that wallet (/verify \`${WALLET}\`).`,
    );
    expect(payload.components).toEqual([]);
  });

  it('keeps hostile labels and names inert, and many entries within Discord’s limits', () => {
    const hostile = Array.from({ length: 40 }, (_, i) =>
      uncounted({
        label: `${HOSTILE} ${i}`,
        subject: `${HOSTILE}${i}`,
        subjectKind: 'identity',
        reason: 'identity_not_proven',
        signWith: null,
      }),
    );
    const payload = checked(renderWhoami(borrowedReport(hostile), names, ctx(), undefined, signId));
    // Code spans show their text as is: what matters is what renders outside them.
    const text = visibleText(payload).replace(/`[^`]*`/g, '');
    expect(text).not.toMatch(/(?<!\\)\*\*@everyone/);
    expect(text).not.toContain('<@123456789012345678>');
    expect(text).not.toContain('](javascript:');
    expect(payload.allowed_mentions).toEqual({ parse: [] });
    checked(renderMemberReport(borrowedReport(hostile), hostileNames, ctx()));
  });
});

describe('renderMemberReport', () => {
  it('names the member and what a re-check would change', () => {
    const payload = checked(renderMemberReport(report(), names, ctx()));
    const text = visibleText(payload);
    expect(text).toContain('**alice** has 1 proven identity.');
    expect(text).toContain('A re-check would change');
    expect(text).toContain('➕ **Verified Human**');
  });

  it('shows ids for roles and members the guild no longer has', () => {
    const payload = checked(
      renderMemberReport(
        report(),
        { ...names, roles: new Map(), users: new Map(), usernames: new Map() },
        ctx(),
      ),
    );
    const text = visibleText(payload);
    expect(text).toContain(`member \`${USER}\``);
    expect(text).toContain(`a missing role \`${HUMAN}\``);
  });

  it('keeps hostile role, member and identity names inert', () => {
    const hostileReport = report({
      links: [link({ identity: HOSTILE, platform: HOSTILE })],
      evidence: [{ identity: HOSTILE, credentials: humanSet() }],
      decisions: [{ roleId: HUMAN, want: true, because: HOSTILE }],
      diff: { add: [{ roleId: HUMAN, because: HOSTILE }], remove: [] },
    });
    const payload = checked(renderMemberReport(hostileReport, hostileNames, ctx()));
    expect(visibleText(payload)).not.toMatch(/(?<!\\)\*\*@everyone/);
  });
});

describe('setup, rules and disable', () => {
  it('refuses setup with each problem and its fix, and says nothing was saved', () => {
    const payload = checked(renderSetupResult({ settings: null, problems: [problem] }, names, ctx()));
    const text = visibleText(payload);
    expect(payload.embeds[0]?.title).toBe('❌ Role gating not set up');
    expect(text).toContain('Nothing was saved');
    expect(text).toContain('Move the bot’s role above “Verified Human” in Server Settings → Roles');
  });

  it('confirms setup with the rules by name', () => {
    const payload = checked(renderSetupResult({ settings: settings(), problems: [] }, names, ctx()));
    const fields = payload.embeds[0]?.fields ?? [];
    expect(fields.find((f) => f.name === 'Human role')?.value).toContain('**Verified Human**');
    expect(fields.find((f) => f.name === 'Human role')?.value).toContain('score ≥ 20');
    expect(fields.find((f) => f.name === 'Log channel')?.value).toBe('**#gating\\-log**');
    expect(fields.find((f) => f.name === 'Flags')?.value).toContain('takes the human role away');
  });

  it('shows rules, or how to set up when there are none', () => {
    expect(visibleText(checked(renderRules(undefined, names, ctx())))).toContain('/gating setup');
    const off = checked(
      renderRules(settings({ enabled: false, minScore: null, spamRoleId: null }), names, ctx()),
    );
    expect(visibleText(off)).toContain('Role gating is off');
    expect(visibleText(off)).toContain('Spam: no role');
    checked(renderRules(settings(), hostileNames, ctx()));
    const risky = checked(renderRules(settings({ riskyRoleId: RISKY }), names, ctx()));
    expect(visibleText(risky)).toContain(`Risky: a missing role \`${RISKY}\``);
  });

  it('tells whether disable changed anything', () => {
    expect(checked(renderDisabled({ kind: 'disabled' }, ctx())).embeds[0]?.title).toBe(
      'Role gating turned off',
    );
    for (const kind of ['already_off', 'not_set_up'] as const)
      expect(checked(renderDisabled({ kind }, ctx())).embeds[0]?.title).toBe('Role gating was already off');
  });

  it('a refused disable or confirm-removals names every role beyond the invoker, inert', () => {
    const beyond: RoleProblem[] = [
      { roleId: SPAM, roleName: 'Spam', problem: 'above_invoker' },
      { roleId: RISKY, roleName: HOSTILE, problem: 'above_invoker' },
    ];
    const off = checked(renderDisabled({ kind: 'refused', problems: beyond }, ctx()));
    expect(off.embeds[0]?.title).toBe('🔒 Role gating stays on');
    expect(visibleText(off)).toContain('Nothing was changed');
    expect(visibleText(off)).toContain('“Spam” is at or above your highest role');
    const held = checked(renderGatedRolesRefused('confirmRemovals', beyond, ctx()));
    expect(held.embeds[0]?.title).toBe('🔒 Removals still held');
    expect(visibleText(held)).toContain('The removals stay held');
    expect(visibleText(held)).toContain('“Spam” is at or above your highest role');
    expect(visibleText(held)).not.toContain('@everyone');
  });
});

describe('recheck, preview and status', () => {
  it('tells apart two members with one display name, by username (or id when it is not known)', () => {
    const [one, two, three] = ['2000000000000000101', '2000000000000000102', '2000000000000000103'];
    const alexes: GuildNames = {
      ...names,
      users: new Map([
        [one, 'Alex'],
        [two, 'Alex'],
        [three, 'Alex'],
      ]),
      usernames: new Map([
        [one, 'alex_one'],
        [two, 'alex_two'],
      ]),
    };
    const nothing = { applied: { add: [], remove: [] }, waiting: [] };
    const said = (userId: string) =>
      visibleText(checked(renderMemberRecheck(userId, nothing, alexes, ctx())));
    expect(said(one)).toContain('**Alex** (alex\\_one)');
    expect(said(two)).toContain('**Alex** (alex\\_two)');
    expect(said(three)).toContain(`**Alex** (\`${three}\`)`);
    const preview: GuildPreview = {
      members: 3,
      addCount: 3,
      removeCount: 0,
      unknownCount: 0,
      sample: [one, two, three].map((userId) => ({
        userId,
        username: userId === three ? 'alex_walked' : null,
        add: [HUMAN],
        remove: [],
        because: ['isHuman'],
      })),
    };
    const fields = checked(renderPreview(preview, alexes, ctx())).embeds[0]?.fields ?? [];
    expect(fields.map((f) => f.name)).toEqual([
      'Alex (alex\\_one)',
      'Alex (alex\\_two)',
      'Alex (alex\\_walked)',
    ]);
  });

  it('reports a member re-check with the queued changes, or that nothing changes', () => {
    const payload = checked(renderMemberRecheck(USER, { applied: report().diff, waiting: [] }, names, ctx()));
    expect(visibleText(payload)).toContain('➖ **Spam**');
    const none = checked(
      renderMemberRecheck(USER, { applied: { add: [], remove: [] }, waiting: [] }, names, ctx()),
    );
    expect(visibleText(none)).toContain('already match');
    const waiting = checked(
      renderMemberRecheck(
        USER,
        { applied: { add: [], remove: [] }, waiting: [{ roleId: HUMAN, because: HOSTILE }] },
        names,
        ctx(),
      ),
    );
    expect(visibleText(waiting)).toContain('Not removed yet');
    expect(visibleText(waiting)).not.toContain('already match');
  });

  it('reports a server re-check, finished or still running', () => {
    const done = checked(
      renderGuildRecheck(
        {
          kind: 'done',
          members: 1200,
          changes: 7,
          failures: 2,
          unlinked: 1,
          pendingRemovals: 0,
          heldRemovals: 0,
        },
        ctx(),
      ),
    );
    expect(visibleText(done)).toContain('Checked 1,200 linked members');
    expect(visibleText(done)).toContain('Lookups failed for 2 members');
    const running = checked(renderGuildRecheck({ kind: 'running', linkedMembers: 10_000 }, ctx()));
    expect(visibleText(running)).toContain('10,000 linked members');
    const elsewhere = checked(
      renderGuildRecheck(
        {
          kind: 'done',
          members: 0,
          changes: 0,
          failures: 0,
          unlinked: 0,
          pendingRemovals: 0,
          heldRemovals: 0,
          elsewhere: true,
        },
        ctx(),
      ),
    );
    expect(visibleText(elsewhere)).toContain('Another process of this bot is re-checking this server');
    expect(visibleText(elsewhere)).not.toContain('Checked 0');
  });

  it('shows a dry run with counts and at most ten sample members', () => {
    const preview: GuildPreview = {
      members: 40,
      addCount: 12,
      removeCount: 3,
      unknownCount: 1,
      sample: Array.from({ length: 12 }, (_, i) => ({
        userId: i === 0 ? USER : `20000000000000001${String(i).padStart(2, '0')}`,
        username: i === 2 ? 'bob_seen_in_walk' : null,
        add: [HUMAN],
        remove: i % 2 === 0 ? [SPAM] : [],
        because: [i === 0 ? HOSTILE : 'isHuman: Gitcoin Passport (x.eth)'],
      })),
    };
    const payload = checked(renderPreview(preview, names, ctx()));
    const embed = payload.embeds[0];
    expect(embed?.description).toContain('Would add: 12 · would remove: 3');
    expect(embed?.description).toContain('Nothing was changed.');
    expect(embed?.fields).toHaveLength(10);
    expect(embed?.fields?.[0]?.name).toBe('alice');
    expect(embed?.fields?.[1]?.name).toMatch(/^Member \d+$/);
    expect(embed?.fields?.[2]?.name).toBe('bob\\_seen\\_in\\_walk');
  });

  it('shows status problems with their fixes and every check', () => {
    const status: GuildStatus = {
      enabled: true,
      settings: settings(),
      manageRoles: false,
      guildMembersIntent: true,
      problems: [problem],
      blockedRoleIds: [],
      heldRemovals: 0,
      lastFullSyncAt: null,
      queueLength: 42,
      linkedMembers: 5,
      signingLinksBound: true,
    };
    const payload = checked(renderStatus(status, names, ctx()));
    const fields = payload.embeds[0]?.fields ?? [];
    expect(payload.embeds[0]?.description).toBe('Some things need attention.');
    expect(fields.find((f) => f.name === 'Bot permissions')?.value).toMatch(/^❌ Manage Roles is missing/);
    expect(fields.find((f) => f.name === 'Role hierarchy')?.value).toContain('Move the bot’s role above');
    expect(fields.find((f) => f.name === 'Last full re-check')?.value).toBe('never');
    expect(fields.find((f) => f.name === 'Role changes queued')?.value).toBe('42');
    const healthy = checked(
      renderStatus({ ...status, manageRoles: true, problems: [], lastFullSyncAt: NOW_MS }, names, ctx()),
    );
    expect(healthy.embeds[0]?.description).toBe('Everything the bot needs is in place.');
    expect(healthy.embeds[0]?.fields?.find((f) => f.name === 'Signing links')).toBeUndefined();
  });

  it('warns when signing links are not bound to a Discord account', () => {
    const status: GuildStatus = {
      enabled: true,
      settings: settings(),
      manageRoles: true,
      guildMembersIntent: true,
      problems: [],
      blockedRoleIds: [],
      heldRemovals: 0,
      lastFullSyncAt: NOW_MS,
      queueLength: 0,
      linkedMembers: 5,
      signingLinksBound: false,
    };
    const payload = checked(renderStatus(status, names, ctx()));
    expect(payload.embeds[0]?.description).toBe('Some things need attention.');
    const field = payload.embeds[0]?.fields?.find((f) => f.name === 'Signing links');
    expect(field?.value).toMatch(/^⚠️ Not bound to an account/);
    expect(field?.value).toContain('DISCORD_CLIENT_SECRET');
  });
});

describe('small messages', () => {
  it('refuses a member without Manage Roles and says nothing changed', () => {
    const text = visibleText(checked(renderNeedsManageRoles(ctx())));
    expect(text).toContain('Manage Roles');
    expect(text).toContain('Nothing was changed');
  });

  it('counts unlinked identities', () => {
    expect(visibleText(checked(renderUnverified(2, null, ctx())))).toContain(
      '2 linked identities were removed',
    );
    expect(visibleText(checked(renderUnverified(0, 'bob.eth', ctx())))).toContain(
      '**bob.eth** is not linked',
    );
    const cleared = visibleText(checked(renderUnverified(0, null, ctx(), true)));
    expect(cleared).toContain('Linked Roles connection was cleared');
    expect(cleared).not.toContain('Nothing to unlink');
  });
});

describe('rule explanations in the reader’s language', () => {
  it('a decision’s reason is worded from its code in German and Japanese, and in English from the catalog', async () => {
    const { decisionReason, reasonText } = await import('../../src/render/gatingLabels.ts');
    const d = {
      because: 'no unexpired isHuman credential is true or scores ≥ 20 (a.eth)',
      why: { code: 'noHumanOrScore' as const, values: { identities: 'a.eth', minScore: 20 } },
    };
    expect(decisionReason(d, 'en-US')).toBe(reasonText(d.because));
    expect(decisionReason(d, 'de')).toContain('Nachweis ist wahr oder erreicht ≥ 20');
    expect(decisionReason(d, 'ja')).toContain('スコア 20 以上');
    expect(decisionReason({ because: 'held by a moderator' }, 'de')).toBe(reasonText('held by a moderator'));
  });
});

describe(`in a pseudo-locale whose every message is 40% longer (${PSEUDO})`, () => {
  beforeAll(() => registerCatalog(PSEUDO, pseudoCatalog()));

  it('every gating reply still fits Discord, with hostile names and many entries', () => {
    const long = ctx({ locale: PSEUDO });
    const many = Array.from({ length: 12 }, (_, i) =>
      link({ identity: `${HOSTILE}${i}.eth`, lastCheckOk: i % 3 !== 0 }),
    );
    const crowded = report({
      links: many,
      evidence: many.map((l) => ({ identity: l.identity, credentials: humanSet() })),
      pendingRemovals: [
        {
          guildId: '3000000000000000001',
          userId: USER,
          subject: `role:${HUMAN}`,
          firstSeenAt: NOW_MS - 60_000,
          reason: HOSTILE,
          heldAt: NOW_MS - 30_000,
          confirmAt: NOW_MS + 3_600_000,
        },
      ],
      blockedRoleIds: [SPAM],
    });
    const hostileUncounted = Array.from({ length: 8 }, (_, i) =>
      uncounted({ subject: `${WALLET.slice(0, -1)}${i}`, label: HOSTILE }),
    );
    for (const payload of [
      renderWhoami(crowded, hostileNames, long),
      renderWhoami(borrowedReport(hostileUncounted), hostileNames, long, undefined, signId),
      renderMemberReport(crowded, hostileNames, long),
      renderMemberRecheck(USER, { applied: report().diff, waiting: [] }, hostileNames, long),
      renderSetupResult({ settings: null, problems: [problem] }, hostileNames, long),
      renderSetupResult({ settings: settings(), problems: [] }, hostileNames, long),
      renderRules(settings({ riskyRoleId: RISKY }), hostileNames, long),
      renderDisabled({ kind: 'disabled' }, long),
      renderDisabled({ kind: 'refused', problems: [{ ...problem, problem: 'above_invoker' }] }, long),
      renderNeedsManageRoles(long),
      renderUnverified(2, HOSTILE, long),
    ]) {
      checked(payload);
      expect(visibleText(payload)).toMatch(/ŀőŗēɱ/);
    }
  });
});
