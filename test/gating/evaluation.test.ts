/**
 * The Evaluator weighs each credential answer by subject (credentialSubjects.ts) for every consumer:
 * guild rules (`evaluate`) and reports and Linked Roles (`evidenceOf`). Against the stand-in Web3.bio
 * through the real client; the store only records checks.
 */
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ensProfile, nextAddress, walletCredentials } from '../../fakes/web3bio/builders.ts';
import { type FakeWeb3Bio, startFakeWeb3Bio } from '../../fakes/web3bio/server.ts';
import { roleConnectionFor } from '../../src/gating/linkedRoles/linkedRoles.ts';
import { type EvaluateOptions, Evaluator } from '../../src/gating/rules/evaluation.ts';
import type { GuildSettings, LinkCheck, LinkKey, LinkRecord } from '../../src/store/types.ts';
import { Web3BioClient } from '../../src/web3bio/client.ts';

const GUILD = '100000000000000001';
const USER = '200000000000000001';
const HUMAN = '300000000000000001';
const SPAM = '300000000000000002';
const NOW = Date.UTC(2026, 4, 1);

let web3: FakeWeb3Bio;
let web3bio: Web3BioClient;
let checks: { key: LinkKey; check: LinkCheck }[];
let evaluator: Evaluator;

beforeEach(async () => {
  web3 = await startFakeWeb3Bio({ seed: false });
  web3bio = new Web3BioClient({
    baseUrl: web3.url,
    rateLimit: null,
    retry: { retries: 0, baseDelayMs: 5, maxDelayMs: 10 },
    timeoutMs: 2_000,
  });
  checks = [];
  evaluator = new Evaluator({
    web3bio,
    store: {
      recordLinkCheck: async (key, check) => {
        checks.push({ key, check });
        return true;
      },
    },
    logger: pino({ level: 'silent' }),
    now: () => NOW,
  });
});

afterEach(async () => {
  await web3bio.close();
  await web3.close();
});

const settings: GuildSettings = {
  guildId: GUILD,
  enabled: true,
  humanRoleId: HUMAN,
  spamRoleId: SPAM,
  riskyRoleId: null,
  minScore: 20,
  spamRemovesHuman: true,
  logChannelId: null,
  lastFullSyncAt: null,
  updatedAt: NOW,
};

const options = (over: Partial<EvaluateOptions> = {}): EvaluateOptions => ({
  settings,
  fresh: false,
  dryRun: false,
  checkRecords: false,
  ...over,
});

const member = { userId: USER, username: 'alice', roleIds: new Set<string>() };

function link(identity: string, over: Partial<LinkRecord> = {}): LinkRecord {
  return {
    guildId: GUILD,
    userId: USER,
    identity,
    platform: 'ens',
    address: null,
    proofMethod: 'record',
    provenAt: NOW - 60_000,
    lastCheckAt: null,
    lastCheckOk: null,
    lastResult: null,
    releasedAt: null,
    ...over,
  };
}

/** A name resolving to a wallet that holds Galxe KYC and Human Passport, owned by `owner`. */
function name(identity: string, owner: 'wallet' | 'other', opts: { spam?: boolean } = {}): string {
  const wallet = nextAddress();
  web3.world.addProfile(ensProfile(identity, wallet, 'alice'));
  web3.world.setCredentials(wallet, walletCredentials(wallet, opts));
  web3.world.setDomainOwners(identity, { owner: owner === 'wallet' ? wallet : nextAddress(), manager: null });
  return wallet;
}

const domainRequests = () => web3.requests.filter((r) => r.path.startsWith('/domain/')).length;
const want = (decisions: { roleId: string; want: boolean | null }[], roleId: string) =>
  decisions.find((d) => d.roleId === roleId)?.want;

describe('Evaluator: credentials count only for what was proven', () => {
  it('a record link of a name owned elsewhere: no human role, the wallet’s entries listed; the stored check keeps them', async () => {
    const wallet = name('sub.attacker.eth', 'other');
    const evaluation = await evaluator.evaluate(
      member,
      [link('sub.attacker.eth', { address: wallet })],
      options(),
    );
    expect(want(evaluation.decisions, HUMAN)).toBe(false);
    expect(evaluation.evidence[0]?.credentials?.isHuman).toEqual([]);
    expect(evaluation.evidence[0]?.uncounted?.map((u) => [u.label, u.subject, u.signWith])).toEqual([
      ['Galxe KYC Verified', wallet, wallet],
      ['Passport Humanity Verified', wallet, wallet],
    ]);
    // lastResult stays the answer as read: every subject, so a flag hold sees every flag.
    expect(checks[0]?.check.result?.isHuman).toHaveLength(2);
  });

  it('owned by the wallet it resolves to: the human role, with the domain read once and then from the cache', async () => {
    const wallet = name('alice.eth', 'wallet');
    const links = [link('alice.eth', { address: wallet })];
    expect(want((await evaluator.evaluate(member, links, options())).decisions, HUMAN)).toBe(true);
    expect(want((await evaluator.evaluate(member, links, options())).decisions, HUMAN)).toBe(true);
    expect(domainRequests()).toBe(1);
  });

  it('no domain read when nothing is left out', async () => {
    const wallet = nextAddress();
    web3.world.setCredentials(wallet, walletCredentials(wallet));
    const evaluation = await evaluator.evaluate(
      member,
      [link(wallet, { platform: 'ethereum', address: wallet, proofMethod: 'signature' })],
      options(),
    );
    expect(want(evaluation.decisions, HUMAN)).toBe(true);
    expect(domainRequests()).toBe(0);
  });

  it('the borrowed wallet’s spam flag still counts against the member', async () => {
    const wallet = name('sub.attacker.eth', 'other', { spam: true });
    const evaluation = await evaluator.evaluate(
      member,
      [link('sub.attacker.eth', { address: wallet })],
      options(),
    );
    expect(want(evaluation.decisions, SPAM)).toBe(true);
    expect(want(evaluation.decisions, HUMAN)).toBe(false);
  });

  it('when the domain cannot be read, the answer that depends on it counts as a failed lookup: nothing removed', async () => {
    const wallet = name('alice.eth', 'wallet');
    web3.addFault({ match: '/domain/', action: { kind: 'status', status: 503 } });
    const evaluation = await evaluator.evaluate(
      { ...member, roleIds: new Set([HUMAN]) },
      [link('alice.eth', { address: wallet })],
      options(),
    );
    expect(evaluation.failed).toBe(true);
    expect(evaluation.evidence[0]?.credentials).toBeNull();
    expect(want(evaluation.decisions, HUMAN)).toBeNull();
    expect(evaluation.diff).toEqual({ add: [], remove: [] });
  });

  it('Linked Roles (evidenceOf): likely_human and humanity_score only from proven subjects', async () => {
    const borrowed = name('sub.attacker.eth', 'other');
    const asRecord = await evaluator.evidenceOf(
      [link('sub.attacker.eth', { guildId: '', address: borrowed })],
      true,
    );
    const metadata = (evidence: typeof asRecord) =>
      roleConnectionFor({ username: 'x', evidence, firstProvenAt: NOW, nowSec: NOW / 1000 })?.metadata;
    expect(metadata(asRecord)).toMatchObject({ likely_human: '0', humanity_score: '0', not_spam: '1' });
    expect(asRecord[0]?.uncounted).toHaveLength(2);
    // The same name proven by a signature of its wallet: the wallet's credentials are the member's.
    const signed = await evaluator.evidenceOf(
      [link('sub.attacker.eth', { guildId: '', address: borrowed, proofMethod: 'signature' })],
      true,
    );
    expect(metadata(signed)).toMatchObject({ likely_human: '1', humanity_score: '47' });
  });
});
