/**
 * Account proofs in the store, on SQLite and PostgreSQL (issue #36): a subject backs one Discord account
 * app-wide, a later signature by another account takes it only if its challenge came after the proof,
 * removal is by name or whole, and sharing is off until turned on.
 */
import { describe, expect, it } from 'vitest';
import type { AccountProof, GatingStore } from '../../src/store/types.ts';
import { freshDatabaseEachTest, STORE_BACKENDS } from './harness.ts';

const T0 = 1_700_000_000_000;
const WALLET = '0x00000000000000000000000000000000000000a1';
const proof = (userId: string, at: number, over: Partial<AccountProof> = {}): AccountProof => ({
  subject: WALLET,
  userId,
  identity: 'alice.eth',
  platform: 'ens',
  address: WALLET,
  provenAt: at,
  ...over,
});

describe.each(STORE_BACKENDS)('account proofs (%s)', (_name, makeHarness) => {
  let store: GatingStore;
  freshDatabaseEachTest(makeHarness, async (h) => {
    store = await h.open({ now: () => T0 });
  });

  it('one subject backs one account: a signature made after the proof takes it, one made before is refused', async () => {
    expect(await store.saveAccountProof(proof('alice', T0))).toEqual({ displacedUserId: null });
    // Mallory's challenge was made before Alice proved: the race is Alice's.
    expect(await store.saveAccountProof(proof('mallory', T0 + 5), { challengeIssuedAt: T0 - 1 })).toEqual({
      refusal: 'raced',
    });
    expect((await store.accountProofsOf('alice')).map((p) => p.subject)).toEqual([WALLET]);
    expect(await store.accountProofsOf('mallory')).toEqual([]);
    expect((await store.getAccountProof(WALLET))?.userId).toBe('alice');
    // Honest control: a later signature by another account (its own proof) takes the wallet.
    expect(await store.saveAccountProof(proof('bob', T0 + 10), { challengeIssuedAt: T0 + 1 })).toEqual({
      displacedUserId: 'alice',
    });
    expect(await store.accountProofsOf('alice')).toEqual([]);
    expect(await store.accountProofsOf('bob')).toEqual([proof('bob', T0 + 10)]);
    expect(await store.getAccountProof(WALLET)).toEqual(proof('bob', T0 + 10));
    expect(await store.getAccountProof('farcaster,#404')).toBeUndefined();
  });

  it('the same account proving again refreshes its proof; removal by name leaves the others', async () => {
    await store.saveAccountProof(proof('alice', T0));
    await store.saveAccountProof(proof('alice', T0 + 1, { identity: WALLET, platform: 'ethereum' }));
    await store.saveAccountProof(
      proof('alice', T0 + 2, { subject: 'farcaster,#3', identity: 'farcaster,#3', platform: 'farcaster' }),
    );
    expect((await store.accountProofsOf('alice')).map((p) => [p.subject, p.identity])).toEqual([
      [WALLET, WALLET],
      ['farcaster,#3', 'farcaster,#3'],
    ]);
    expect(await store.removeAccountProofs('alice', ["x'); DROP TABLE account_proofs; --"])).toEqual([]);
    expect((await store.removeAccountProofs('alice', [WALLET])).map((p) => p.subject)).toEqual([WALLET]);
    expect(await store.removeAccountProofs('bob')).toEqual([]);
    expect((await store.removeAccountProofs('alice')).map((p) => p.subject)).toEqual(['farcaster,#3']);
    expect(await store.accountProofsOf('alice')).toEqual([]);
  });

  it('sharing is off until the member turns it on, and off again when asked', async () => {
    expect(await store.sharesProofs('alice')).toBe(false);
    await store.setProofSharing('alice', true, T0);
    await store.setProofSharing('alice', true, T0 + 1);
    expect(await store.sharesProofs('alice')).toBe(true);
    expect(await store.sharesProofs('bob')).toBe(false);
    await store.setProofSharing('alice', false, T0 + 2);
    expect(await store.sharesProofs('alice')).toBe(false);
  });

  it('sharing turned on after a moment is listed oldest first, a page at a time; turned off, it is gone', async () => {
    const from = (since: number, userId = '') => ({ since, userId });
    await store.setProofSharing('carol', true, T0 + 30);
    await store.setProofSharing('alice', true, T0 + 10);
    await store.setProofSharing('bob', true, T0 + 30);
    // On again while on keeps the first moment: a look already past it does not see it again.
    await store.setProofSharing('alice', true, T0 + 40);
    expect(await store.sharingSince(from(T0), 10)).toEqual([
      { userId: 'alice', since: T0 + 10 },
      { userId: 'bob', since: T0 + 30 },
      { userId: 'carol', since: T0 + 30 },
    ]);
    // Pages go on from the last row, even between two accounts of one moment.
    expect(await store.sharingSince(from(T0), 2)).toHaveLength(2);
    expect(await store.sharingSince(from(T0 + 30, 'bob'), 2)).toEqual([{ userId: 'carol', since: T0 + 30 }]);
    expect(await store.sharingSince(from(T0 + 10), 10)).toHaveLength(3);
    expect(await store.sharingSince(from(T0 + 10, 'alice'), 10)).toHaveLength(2);
    expect(await store.sharingSince(from(T0 + 31), 10)).toEqual([]);
    await store.setProofSharing('bob', false, T0 + 50);
    expect((await store.sharingSince(from(T0), 10)).map((r) => r.userId)).toEqual(['alice', 'carol']);
  });

  it('a new proof of a member who shares moves their sharing to its moment; of one who does not, no sharing', async () => {
    await store.setProofSharing('alice', true, T0);
    await store.saveAccountProof(proof('alice', T0 + 50));
    await store.saveAccountProof(proof('bob', T0 + 60, { subject: '0xb0b', address: '0xb0b' }));
    expect(await store.sharingSince({ since: T0 + 1, userId: '' }, 10)).toEqual([
      { userId: 'alice', since: T0 + 50 },
    ]);
    expect(await store.sharesProofs('bob')).toBe(false);
  });
});
