import { describe, expect, it } from 'vitest';
import type { RecentLookups } from '../../src/cache/recentLookups.ts';
import type { BotDeps } from '../../src/discord/command.ts';
import { SUGGESTION_SOURCE_DEADLINE_MS, suggestIdentities } from '../../src/discord/identitySuggestions.ts';
import type { GatingService } from '../../src/gating/service.ts';

const warnings: unknown[] = [];
const logger = { warn: (...args: unknown[]) => warnings.push(args) } as unknown as BotDeps['logger'];
const ASKER = { userId: 'alice', guildId: 'guild' };

function deps(recentLookups: Partial<RecentLookups>, gating?: unknown): BotDeps {
  return {
    logger,
    recentLookups: recentLookups as RecentLookups,
    ...(gating ? { gating: gating as GatingService } : {}),
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
    const gating = {
      members: { provenIdentities: async () => ['dwr.farcaster'] },
      linkedRoles: { status: async () => ({ identity: 'dwr.eth', releasedReason: null }) },
    };
    const d = deps({ ofUser: async () => ['dwright.eth'], ofGuild: async () => ['dwx.eth'] }, gating);
    expect((await values(d, 'dw')).slice(0, 4)).toEqual([
      'dwright.eth',
      'dwr.farcaster',
      'dwr.eth',
      'dwx.eth',
    ]);
  });

  it('a released Linked Roles connection is not offered; no guild means no server list', async () => {
    const gating = {
      members: { provenIdentities: async () => [] },
      linkedRoles: { status: async () => ({ identity: 'gone.eth', releasedReason: 'proven_elsewhere' }) },
    };
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
