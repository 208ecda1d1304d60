import { describe, expect, it } from 'vitest';
import type { RecentLookups } from '../../src/cache/recentLookups.ts';
import type { BotDeps } from '../../src/discord/command.ts';
import { SUGGESTION_SOURCE_DEADLINE_MS, suggestIdentities } from '../../src/discord/identitySuggestions.ts';
import { provenIdentitiesOf } from '../../src/gating/provenIdentities.ts';

const warnings: unknown[] = [];
const logger = { warn: (...args: unknown[]) => warnings.push(args) } as unknown as BotDeps['logger'];
const ASKER = { userId: 'alice', guildId: 'guild' };

function deps(recentLookups: Partial<RecentLookups>, proven?: BotDeps['provenIdentities']): BotDeps {
  return {
    logger,
    recentLookups: recentLookups as RecentLookups,
    ...(proven ? { provenIdentities: proven } : {}),
  } as BotDeps;
}

const values = async (d: BotDeps, typed: string) =>
  (await suggestIdentities(d, ASKER, typed)).map((choice) => choice.value);

describe('suggestIdentities', () => {
  it('a failing store (Redis down) leaves completions only, and is logged', async () => {
    const failing = deps({
      ofUser: () => Promise.reject(new Error('Connection is closed.')),
      ofGuild: () => Promise.reject(new Error('Connection is closed.')),
    });
    expect(await values(failing, 'vitalik.ba')).toEqual(['vitalik.base.eth']);
    expect(warnings.length).toBeGreaterThanOrEqual(2);
  });

  it('a source slower than the deadline is left out; the answer still comes in time', async () => {
    const slow = deps({
      ofUser: () => new Promise(() => {}),
      ofGuild: async () => ['vitamin.eth'],
    });
    const started = performance.now();
    expect(await values(slow, 'vit')).toEqual(expect.arrayContaining(['vitamin.eth', 'vit.eth']));
    expect(performance.now() - started).toBeLessThan(SUGGESTION_SOURCE_DEADLINE_MS + 500);
  });

  it('offers proven identities and the Linked Roles identity after the member’s own lookups', async () => {
    const proven = async () => ['dwr.farcaster', 'dwr.eth'];
    const d = deps({ ofUser: async () => ['dwright.eth'], ofGuild: async () => ['dwx.eth'] }, proven);
    expect((await values(d, 'dw')).slice(0, 4)).toEqual([
      'dwright.eth',
      'dwr.farcaster',
      'dwr.eth',
      'dwx.eth',
    ]);
  });

  it('proven identities: what the account signed for first (issue #36); released links and a released Linked Roles connection are not offered', async () => {
    const store = {
      accountProofsOf: async (userId: string) =>
        userId === 'alice' ? [{ subject: '0xabc', identity: 'signed.eth', userId }] : [],
      getAccountProof: async () => undefined,
      getHolding: async () => undefined,
      getUserLinks: async () => [
        { identity: 'kept.eth', releasedAt: null },
        { identity: 'moved.eth', releasedAt: 5 },
      ],
      getLinksOfUser: async () => [{ identity: 'anywhere.eth', releasedAt: null }],
      getRoleConnection: async (userId: string) =>
        userId === 'alice'
          ? { identity: 'dwr.eth', releasedAt: null }
          : { identity: 'gone.eth', releasedAt: 9 },
    } as unknown as Parameters<typeof provenIdentitiesOf>[0];
    expect(await provenIdentitiesOf(store, 'alice', 'guild')).toEqual(['signed.eth', 'kept.eth', 'dwr.eth']);
    expect(await provenIdentitiesOf(store, 'bob', null)).toEqual(['anywhere.eth']);
  });

  it('no guild means no server list', async () => {
    const gating = async () => [];
    let askedGuild = false;
    const d = deps(
      {
        ofUser: async () => [],
        ofGuild: async () => {
          askedGuild = true;
          return ['x.eth'];
        },
      },
      gating,
    );
    expect(await suggestIdentities(d, { userId: 'alice', guildId: null }, '')).toEqual([]);
    expect(askedGuild).toBe(false);
  });
});
