/**
 * The server's connection of an approved Linked Roles Farcaster flow (connectApprovedFlow through
 * FarcasterSignIns' handler for the kind), on a real SQLite store: two replicas (or a process restarted
 * after the approval) that see one approval connect it once; a grant sealed for another member's flow
 * opens for no other flow; an expired flow writes nothing; a /verify flow is not handed to it.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { TokenGrant } from '../../src/discord/oauth.ts';
import {
  connectApprovedFlow,
  openFlowGrant,
  sealFlowGrant,
} from '../../src/gating/linkedRoles/farcasterConnections.ts';
import type { ConnectOutcome } from '../../src/gating/linkedRoles/linkedRoleService.ts';
import { LINKED_ROLES_SCOPE } from '../../src/gating/proofs/challengeMessage.ts';
import { FarcasterSignIns } from '../../src/gating/proofs/farcasterSignIn.ts';
import type { GatingStore } from '../../src/store/types.ts';
import { freshDatabaseEachTest, sqliteHarness } from '../store/harness.ts';

const T0 = 1_700_000_000_000;
const KEY = randomBytes(32);
const ALICE = '300000000000000001';
const BOB = '300000000000000002';
const GRANT: TokenGrant = {
  accessToken: 'alice-access',
  refreshToken: 'alice-refresh',
  expiresIn: 604_800,
  scopes: ['identify', 'role_connections.write'],
};
const SILENT = { info() {}, warn() {}, error() {} };

let store: GatingStore;
let clock = T0;
let connects: { userId: string; accessToken: string; identity: string; issuedAt?: number }[];

freshDatabaseEachTest(sqliteHarness, async (h) => {
  store = await h.open({ now: () => clock });
  clock = T0;
  connects = [];
});

/** The stand-in service: records each connect, and answers `outcome`. */
function service(outcome: ConnectOutcome['kind'] = 'connected') {
  return {
    async connect(userId: string, grant: TokenGrant, proven: { identity: string }, opts = {}) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      connects.push({
        userId,
        accessToken: grant.accessToken,
        identity: proven.identity,
        ...(opts as { challengeIssuedAt?: number }),
      });
      return outcome === 'connected'
        ? ({ kind: 'connected', connection: {}, displaced: 0, uncounted: [] } as unknown as ConnectOutcome)
        : ({ kind: outcome } as ConnectOutcome);
    },
  };
}

/** One web process: its FarcasterSignIns (never reaching a relay or chain), the Linked Roles handler set. */
function replica(outcome?: ConnectOutcome['kind']): FarcasterSignIns {
  const signIns = new FarcasterSignIns({
    store,
    siwe: { publicUrl: 'https://verify.example.test', now: () => clock },
    relay: {
      open: () => Promise.reject(new Error('no relay in this test')),
      status: () => Promise.reject(new Error('no relay in this test')),
    },
    chain: { standing: () => Promise.reject(new Error('no chain in this test')) },
    logger: SILENT,
  });
  const o = { service: service(outcome), store, key: KEY, logger: SILENT, now: () => clock };
  signIns.handleApprovals('linked-role', (flow) => connectApprovedFlow(o, flow));
  return signIns;
}

/** A flow made by `userId` (its grant sealed for `sealedFor`), already approved at the relay. */
async function approvedFlow(
  nonce: string,
  userId: string,
  sealedFor: { nonce: string; userId: string } = { nonce, userId },
  guildId = LINKED_ROLES_SCOPE,
): Promise<void> {
  await store.createFarcasterFlow({
    nonce,
    guildId,
    userId,
    userName: 'alice',
    guildName: null,
    identity: 'alice.farcaster',
    fid: 92,
    createdAt: T0,
    expiresAt: T0 + 600_000,
    sealedGrant: sealFlowGrant(KEY, GRANT, sealedFor),
  });
  await store.openFarcasterChannel(nonce, { token: `T-${nonce}`, url: 'u' }, T0 + 1, 5);
  const approved = { state: 'approved' as const, signer: '0xabc', authMethod: 'custody' as const };
  await store.settleFarcasterFlow(nonce, `T-${nonce}`, approved, T0 + 2);
}

describe('an approved Linked Roles Farcaster flow, finished by the server', () => {
  it('two replicas (or one restarted after the approval) that read it at once connect it once, with its grant', async () => {
    const nonce = 'a'.repeat(32);
    await approvedFlow(nonce, ALICE);
    clock = T0 + 5_000;
    const [one, two] = await Promise.all([replica().view(nonce), replica().view(nonce)]);
    expect(connects).toEqual([
      { userId: ALICE, accessToken: 'alice-access', identity: 'farcaster,#92', challengeIssuedAt: T0 },
    ]);
    expect(await store.getFarcasterFlow(nonce)).toMatchObject({
      state: 'done',
      outcome: { kind: 'connected', uncounted: [] },
      sealedGrant: null,
    });
    expect([one?.flow.state, two?.flow.state]).toEqual(['done', 'done']);
    // A later read (a page load) connects nothing again.
    await replica().view(nonce);
    expect(connects).toHaveLength(1);
  });

  it('a refusal by the registry is recorded as the outcome, and the grant dropped', async () => {
    const nonce = 'b'.repeat(32);
    await approvedFlow(nonce, ALICE);
    await replica('refused').view(nonce);
    expect(connects).toHaveLength(1);
    expect(await store.getFarcasterFlow(nonce)).toMatchObject({
      state: 'done',
      outcome: { kind: 'refused' },
      sealedGrant: null,
    });
  });

  it("a grant sealed for another member's flow opens for no other flow: nothing is written", async () => {
    // Control: the grant opens for the flow and member it was sealed for.
    const own = 'c'.repeat(32);
    await approvedFlow(own, ALICE);
    const ownFlow = await store.getFarcasterFlow(own);
    expect(ownFlow && openFlowGrant(KEY, ownFlow)).toEqual(GRANT);
    // Alice's sealed grant copied onto Bob's flow, and onto another flow of hers: neither opens it.
    const bobs = 'd'.repeat(32);
    await approvedFlow(bobs, BOB, { nonce: own, userId: ALICE });
    const moved = 'e'.repeat(32);
    await approvedFlow(moved, ALICE, { nonce: own, userId: ALICE });
    await replica().view(bobs);
    await replica().view(moved);
    expect(connects).toEqual([]);
    for (const nonce of [bobs, moved])
      expect(await store.getFarcasterFlow(nonce)).toMatchObject({
        state: 'done',
        outcome: { kind: 'failed' },
      });
  });

  it('an approved flow that expired before it was connected writes nothing', async () => {
    const nonce = 'f'.repeat(32);
    await approvedFlow(nonce, ALICE);
    clock = T0 + 600_000;
    const flow = await store.getFarcasterFlow(nonce);
    if (!flow) throw new Error('the flow is gone');
    const o = { service: service(), store, key: KEY, logger: SILENT, now: () => clock };
    await connectApprovedFlow(o, flow);
    expect(connects).toEqual([]);
    expect(await store.getFarcasterFlow(nonce)).toMatchObject({ state: 'approved' });
    // Its page says it expired: the process reading it hands it to nothing.
    expect(await replica().view(nonce)).toBeUndefined();
    expect(connects).toEqual([]);
  });

  it('a /verify flow is not handed to the Linked Roles handler', async () => {
    const nonce = '1'.repeat(32);
    await approvedFlow(nonce, ALICE, { nonce, userId: ALICE }, '200000000000000001');
    await replica().view(nonce);
    expect(connects).toEqual([]);
    expect(await store.getFarcasterFlow(nonce)).toMatchObject({ state: 'approved' });
  });
});
