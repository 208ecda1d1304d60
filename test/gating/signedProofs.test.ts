import { Client, GatewayIntentBits } from 'discord.js';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { shardOf, snowflakeOnShard } from '../../fakes/discord/snowflake.ts';
import { shardsPerProcess } from '../../src/app/sharding.ts';
import {
  handOffSignedProof,
  type SignedProof,
  SignedProofInbox,
} from '../../src/gating/proofs/signedProofs.ts';
import { servesGuild } from '../../src/gating/roles/discordReads.ts';
import type { SignatureLinkResult } from '../../src/gating/types.ts';
import type { GatingStore, NonceRecord } from '../../src/store/types.ts';
import { sqliteHarness } from '../store/harness.ts';
import { silentLogger } from './serviceHarness.ts';

const h = sqliteHarness();
let store: GatingStore;
beforeEach(async () => {
  await h.fresh();
  store = await h.open({ leaseMs: 200 });
});
afterAll(() => h.cleanup());

function record(guildId: string, userId = 'user-1'): NonceRecord {
  return {
    nonce: `n-${guildId}-${userId}`,
    guildId,
    userId,
    userName: 'alice',
    guildName: 'Guild',
    identity: 'alice.eth',
    address: '0xabc',
    expiresAt: Date.now() + 60_000,
    usedAt: Date.now(),
    failedAttempts: 0,
  };
}

function inbox(owned: Set<string>, complete: (proof: SignedProof) => Promise<SignatureLinkResult>) {
  return new SignedProofInbox({
    store,
    logger: silentLogger,
    ownsGuild: (guildId) => owned.has(guildId),
    complete,
    pollMs: 50,
    maxAttempts: 2,
  });
}

describe('signed proofs handed from the HTTP server to the owning shard', () => {
  it('only the process that owns the guild links it, and the waiting page gets its answer', async () => {
    const linkedBy: string[] = [];
    const shard0 = inbox(new Set(['g0']), async () => {
      linkedBy.push('shard0');
      return { ok: true };
    });
    const shard1 = inbox(new Set(['g1']), async (proof) => {
      linkedBy.push(`shard1:${proof.record.userId}:${proof.address}`);
      return { ok: false, refusal: { code: 'too_many_links', count: 5, max: 5 } };
    });
    const nudged: string[] = [];
    const answer = handOffSignedProof(
      store,
      { record: record('g1'), address: '0xabc' },
      {
        nudge: (guildId) => {
          nudged.push(guildId);
          shard0.nudge();
          shard1.nudge();
        },
        pollMs: 10,
      },
    );
    expect(await answer).toEqual({ ok: false, refusal: { code: 'too_many_links', count: 5, max: 5 } });
    expect(nudged).toEqual(['g1']);
    expect(linkedBy).toEqual(['shard1:user-1:0xabc']);
    await Promise.all([shard0.stop(), shard1.stop()]);
  });

  it('with no owner running, the page says queued; the owner starting later links it', async () => {
    const answer = await handOffSignedProof(
      store,
      { record: record('g1'), address: '0xabc' },
      { nudge: () => {}, waitMs: 100, pollMs: 10 },
    );
    expect(answer).toEqual({ ok: true, queued: true });
    const linked: string[] = [];
    const late = inbox(new Set(['g1']), async (proof) => {
      linked.push(proof.record.guildId);
      return { ok: true };
    });
    late.start();
    const deadline = Date.now() + 2_000;
    while (linked.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    await late.stop();
    expect(linked).toEqual(['g1']);
    expect(await store.openSignedProofs(10)).toEqual([]);
  });

  it('retries a proof whose linking throws, then answers a failure instead of retrying forever', async () => {
    let calls = 0;
    const failing = inbox(new Set(['g1']), async () => {
      calls += 1;
      throw new Error('Discord down');
    });
    const id = await store.enqueueSignedProof({ record: record('g1'), address: '0xabc' });
    failing.nudge();
    await failing.idle();
    expect(await store.signedProofResult(id)).toBeNull();
    await new Promise((r) => setTimeout(r, 250)); // the first claim's lease lapses
    failing.nudge();
    await failing.idle();
    await failing.stop();
    expect(calls).toBe(2);
    expect(await store.signedProofResult(id)).toEqual({
      ok: false,
      refusal: { code: 'lookup_failed', identity: 'alice.eth' },
    });
  });
});

describe('shard ownership', () => {
  it('servesGuild: a client running some shards serves only their guilds; one running all serves every guild', () => {
    const some = new Client({ intents: [GatewayIntentBits.Guilds], shards: [1, 3], shardCount: 4 });
    const all = new Client({ intents: [GatewayIntentBits.Guilds] });
    for (const shard of [0, 1, 2, 3]) {
      const guildId = snowflakeOnShard(shard, 4);
      expect(shardOf(guildId, 4)).toBe(shard);
      expect(servesGuild(some, guildId)).toBe(shard === 1 || shard === 3);
      expect(servesGuild(all, guildId)).toBe(true);
    }
    expect(servesGuild(some, 'not-a-snowflake')).toBe(false);
  });

  it('shardsPerProcess: SHARDS_PER_PROCESS, else the shards spread over one process per core', () => {
    expect(shardsPerProcess(4, 1, 2)).toBe(1);
    expect(shardsPerProcess(4, undefined, 2)).toBe(2);
    expect(shardsPerProcess(5, undefined, 2)).toBe(3);
    expect(shardsPerProcess(2, 8, 2)).toBe(2);
    expect(shardsPerProcess(1, undefined, 16)).toBe(1);
  });
});
