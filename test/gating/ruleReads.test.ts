import pino from 'pino';
import { describe, expect, it } from 'vitest';
import type { RoleRule } from '../../src/gating/rules/roleRules.ts';
import { readRuleFacts, rulePlatformOf } from '../../src/gating/rules/ruleReads.ts';
import type { LinkRecord } from '../../src/store/types.ts';
import type { Web3BioClient } from '../../src/web3bio/client.ts';
import { NotFoundError } from '../../src/web3bio/errors.ts';

const link = (identity: string): LinkRecord =>
  ({ guildId: 'g', userId: 'u', identity, releasedAt: null, proofMethod: 'record' }) as LinkRecord;

const fetched = <T>(data: T, stale = false) => ({ data, stale, fetchedAt: 0, cached: false });

/** A client that answers from these maps and records what was asked. */
function client(o: { domains?: Record<string, unknown>; followers?: Record<string, number | 'stale'> }) {
  const asked: string[] = [];
  const fake = {
    async getDomain(name: string) {
      asked.push(`domain ${name}`);
      const found = o.domains?.[name];
      if (found === undefined) throw new NotFoundError(name);
      if (found === 'fail') throw new Error('503');
      return fetched(found);
    },
    async getPlatformProfile(platform: string, identity: string) {
      asked.push(`profile ${platform} ${identity}`);
      const count = o.followers?.[identity];
      if (count === undefined) throw new Error('503');
      return fetched(
        { social: { uid: 1, follower: count === 'stale' ? 5 : count, following: 0 } },
        count === 'stale',
      );
    },
  };
  return { web3bio: fake as unknown as Web3BioClient, asked };
}

const rules = (...conditions: RoleRule['conditions']): RoleRule[] => [
  { roleId: 'r', match: 'all', conditions },
];
const logger = pino({ level: 'silent' });

describe('what the role rules read', () => {
  it('reads nothing beyond the links when no rule asks names or followers', async () => {
    const { web3bio, asked } = client({});
    const facts = await readRuleFacts(
      { web3bio, logger },
      rules({ kind: 'score', min: 1 }),
      [link('alice.eth')],
      [],
      false,
    );
    expect(asked).toEqual([]);
    expect(facts.proven).toEqual([{ identity: 'alice.eth', platform: 'ens' }]);
  });

  it('reads /domain of proven names only, and a failure or "not found" is unknown', async () => {
    const { web3bio, asked } = client({
      domains: { 'alice.eth': { createdAt: 5, expiredAt: 9 }, 'bad.eth': 'fail' },
    });
    const links = [
      link('alice.eth'),
      link('bad.eth'),
      link('gone.eth'),
      link('dwr.farcaster'),
      link('0x1234567890123456789012345678901234567890'),
    ];
    const facts = await readRuleFacts(
      { web3bio, logger },
      rules({ kind: 'name-age', days: 1 }),
      links,
      [],
      false,
    );
    expect(asked.sort()).toEqual(['domain alice.eth', 'domain bad.eth', 'domain gone.eth']);
    expect(facts.names).toEqual([
      { identity: 'alice.eth', domain: { createdAt: 5, expiredAt: 9 } },
      { identity: 'bad.eth', domain: null },
      { identity: 'gone.eth', domain: null },
    ]);
  });

  it('reads the own profile of proven identities on the asked platform only; a stale answer is unknown', async () => {
    const { web3bio, asked } = client({ followers: { 'dwr.farcaster': 1200, 'stani.lens': 'stale' } });
    const links = [link('dwr.farcaster'), link('stani.lens'), link('alice.eth')];
    const farcasterOnly = await readRuleFacts(
      { web3bio, logger },
      rules({ kind: 'followers', platform: 'farcaster', min: 1 }),
      links,
      [],
      false,
    );
    expect(asked).toEqual(['profile farcaster dwr.farcaster']);
    expect(farcasterOnly.followers).toEqual([
      { identity: 'dwr.farcaster', platform: 'farcaster', followers: 1200 },
    ]);
    const lens = await readRuleFacts(
      { web3bio, logger },
      rules({ kind: 'followers', platform: 'lens', min: 1 }),
      links,
      [],
      true,
    );
    expect(lens.followers).toEqual([{ identity: 'stani.lens', platform: 'lens', followers: null }]);
  });

  it('names the platform of each kind of identity', () => {
    expect(
      [
        'a.base.eth',
        'a.linea.eth',
        'a.sol',
        'HN7cABqLq46Es1jh92dQQisAq662SmxELLLsHHe4YWrH',
        '0x1234567890123456789012345678901234567890',
        'not an id',
      ].map(rulePlatformOf),
    ).toEqual(['basenames', 'linea', 'solana', 'solana', null, null]);
  });
});
