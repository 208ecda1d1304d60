/**
 * Prove once, bring it anywhere (issue #36) over HTTP interactions: `/verify share:all-servers` and
 * `/unverify` POSTed to a web replica (PROCESS_ROLE=web, which serves no server) reach the gateway worker,
 * and the worker's servers follow: sharing links the member's proof in every server she is in (a member
 * who did not opt in gets nothing), and `/unverify` in a DM with the bot (no server: everywhere by
 * default) removes the proof from every server, roles following, while `/unverify` in a server removes
 * it there only.
 */
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { createDatabase } from '../../fakes/localPostgres.ts';
import type { startRoundRobin } from '../../fakes/roundRobin.ts';
import { gatingCredentials } from '../../fakes/web3bio/builders.ts';
import { closeGating, embedOf, type GatingHarness, seen, setup, waitFor } from './gatingHarness.ts';
import { ALICE, BOB, walletAccountProof } from './harness.ts';
import { handedOverIn, type Replica, startSplit } from './replicaHarness.ts';
import { addServer, runIn, type Server, serverA, text } from './serverShortcuts.ts';

let db: Awaited<ReturnType<typeof createDatabase>>;
let g: GatingHarness;
const replicas: Replica[] = [];
let lb: Awaited<ReturnType<typeof startRoundRobin>>;
let a: Server;
let b: Server;

beforeAll(async () => {
  // No Redis: the store alone carries the hand-offs (as in the Redis-outage test of httpGating).
  ({ db, g, lb } = await startSplit('http_sharing', { REDIS_URL: 'redis://127.0.0.1:1' }, replicas, {
    LOG_LEVEL: 'info',
    GATING_SHARING_PICKUP_SECONDS: '1',
  }));
  await setup(g);
  a = serverA(g);
  b = await addServer(g, 'Server B');
}, 60_000);
afterAll(async () => {
  await lb?.close();
  for (const r of replicas) await r.close();
  await closeGating();
  await db?.drop();
});

const holds = (server: Server, userId: string) =>
  g.h.discord.state.guilds.get(server.id)?.members.get(userId)?.roles.includes(server.humanRoleId) ?? false;
const linksIn = async (server: Server, userId: string) =>
  (await g.gating.store.getUserLinks(server.id, userId)).filter((l) => l.releasedAt === null);

/** A wallet with a human credential, proven by `userId`'s signature earlier (in a third server). */
async function provenWallet(userId: string): Promise<string> {
  const address = privateKeyToAccount(generatePrivateKey()).address.toLowerCase();
  g.h.upstream.world.setCredentials(address, gatingCredentials(address, { human: true }));
  await g.gating.store.saveAccountProof(walletAccountProof(userId, address));
  return address;
}

describe('sharing and removing over HTTP interactions, through a web replica', () => {
  it("/verify share:all-servers through a replica: the worker's servers give her the role; Bob, who did not opt in, gets nothing", async () => {
    const alices = await provenWallet(ALICE);
    await provenWallet(BOB);
    const before = handedOverIn(replicas).length;
    const shared = await runIn(g, a, ALICE, 'verify', [text('share', 'all-servers')]);
    expect(embedOf(shared).title).toBe('Sharing is on');
    expect(handedOverIn(replicas).length).toBe(before + 1);
    await waitFor(() => holds(a, ALICE) && holds(b, ALICE), 'her role in A and B', 20_000);
    for (const server of [a, b])
      expect((await linksIn(server, ALICE)).map((l) => [l.identity, l.proofMethod])).toEqual([
        [alices, 'signature'],
      ]);

    // The control: Bob proved his wallet too, but shares nothing. A pick-up later, he has nothing anywhere.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    for (const server of [a, b]) {
      expect(await linksIn(server, BOB)).toEqual([]);
      expect(holds(server, BOB)).toBe(false);
    }
  });

  it('/unverify in B removes it from B only; in a DM with the bot (no server) it goes from every server, roles following', async () => {
    const wallet = await provenWallet(BOB);
    const proofsOfBob = async () => (await g.gating.store.accountProofsOf(BOB)).map((p) => p.subject);
    for (const server of [a, b]) {
      const brought = await runIn(g, server, BOB, 'verify', [text('identity', wallet)]);
      expect(seen(brought)).toContain('now counts in this server too');
    }
    await waitFor(() => holds(a, BOB) && holds(b, BOB), 'his role in A and B');

    // Honest control: in a server, without everywhere, only that server.
    const here = await runIn(g, b, BOB, 'unverify', [text('identity', wallet)]);
    expect(embedOf(here).title).toBe('Unlinked');
    await waitFor(() => !holds(b, BOB), 'his role to leave B');
    expect(await linksIn(b, BOB)).toEqual([]);
    expect((await linksIn(a, BOB)).map((l) => l.identity)).toEqual([wallet]);
    expect(holds(a, BOB)).toBe(true);
    expect(await proofsOfBob()).toContain(wallet);

    // Brought back to B, then removed from a DM with the bot: the interaction carries no server.
    await runIn(g, b, BOB, 'verify', [text('identity', wallet)]);
    await waitFor(() => holds(b, BOB), 'his role back in B');
    const dmHandOffs = () => handedOverIn(replicas).filter((l) => l.guildId === null && l.userId === BOB);
    const dmBefore = dmHandOffs().length;
    const everywhere = await runIn(g, null, BOB, 'unverify', [text('identity', wallet)]);
    expect(dmHandOffs().length).toBe(dmBefore + 1);
    expect(seen(everywhere)).toContain('removed from your account and from 2 servers');
    await waitFor(() => !holds(a, BOB) && !holds(b, BOB), 'his roles to leave A and B');
    expect(await linksIn(a, BOB)).toEqual([]);
    expect(await linksIn(b, BOB)).toEqual([]);
    expect(await proofsOfBob()).not.toContain(wallet);
  });
});
