/**
 * Prove once, bring it anywhere (issue #36), end to end through the stand-ins with three gating servers
 * (A, the harness's; B and C added here). Each attack sits next to its honest control: a proof belongs to
 * the account that signed, a server sees it only once the member brings it (or shares), removal is
 * scoped, a record is read again where it is used, and sharing is opt-in.
 */
import { gunzipSync } from 'node:zlib';
import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterEach, describe, expect, it } from 'vitest';
import { memberJoined } from '../../fakes/discord/client.ts';
import type { FakeMessage } from '../../fakes/discord/server.ts';
import { ensProfile, gatingCredentials } from '../../fakes/web3bio/builders.ts';
import {
  addIdentity,
  closeGating,
  embedOf,
  type GatingHarness,
  hasRole,
  PUBLIC_URL,
  seen,
  setup,
  signFromReply,
  startGating,
  waitFor,
} from './gatingHarness.ts';
import { ALICE, BOB, isEphemeral, visibleMessage } from './harness.ts';
import {
  addServer,
  runIn,
  type Server,
  serverA,
  startWithServers,
  text,
  verifyIn,
} from './serverShortcuts.ts';

afterEach(closeGating);

/** `/gating check member:` by the server's owner. */
const checkIn = (g: GatingHarness, server: Server, member: string) =>
  runIn(g, server, server.ownerId, 'gating', [
    {
      type: ApplicationCommandOptionType.Subcommand,
      name: 'check',
      options: [{ type: ApplicationCommandOptionType.User, name: 'member', value: member }],
    } as never,
  ]);

/** Every file of `/gating export` by the server's owner, as text. */
async function exportOf(g: GatingHarness, server: Server): Promise<string> {
  const reply = await runIn(g, server, server.ownerId, 'gating', [
    { type: ApplicationCommandOptionType.Subcommand, name: 'export' } as never,
  ]);
  expect(reply.attachments.length).toBeGreaterThan(0);
  return reply.attachments
    .map((a) => {
      const data = g.h.discord.state.files.get(a.id)?.data ?? new Uint8Array();
      return (a.filename.endsWith('.gz') ? gunzipSync(data) : Buffer.from(data)).toString('utf8');
    })
    .join('\n');
}

function holds(g: GatingHarness, server: Server, userId: string): boolean {
  return (
    g.h.discord.state.guilds.get(server.id)?.members.get(userId)?.roles.includes(server.humanRoleId) ?? false
  );
}

function signingLinkIn(reply: FakeMessage): string | undefined {
  return JSON.stringify(reply.components ?? []).match(/"url":"([^"]+)"/)?.[1];
}

/** A fresh wallet with a human credential on the stand-in Web3.bio. */
function humanWallet(g: GatingHarness) {
  const wallet = privateKeyToAccount(generatePrivateKey());
  const address = wallet.address.toLowerCase();
  g.h.upstream.world.setCredentials(address, gatingCredentials(address, { human: true }));
  return { wallet, address };
}

/** `userId` proves `wallet` by signature in server A (the signing link, then the signature). */
async function signInA(g: GatingHarness, userId: string, w: ReturnType<typeof humanWallet>) {
  const reply = await verifyIn(g, serverA(g), userId, w.wallet.address);
  expect(signingLinkIn(reply)?.startsWith(`${PUBLIC_URL}/verify/`)).toBe(true);
  const signed = await signFromReply(g, reply, w.wallet);
  expect(signed.body.ok).toBe(true);
  await g.gating.service.idle(g.guildId);
  expect(hasRole(g, userId, g.humanRoleId)).toBe(true);
}

const linksIn = async (g: GatingHarness, server: Server, userId: string) =>
  (await g.gating.store.getUserLinks(server.id, userId)).filter((l) => l.releasedAt === null);

describe('prove once, bring it anywhere (issue #36)', () => {
  it('signed in A, brought to B with /verify: no signing link, the role in B; before that B sees none of it; another account must sign', async () => {
    const [g, b] = await startWithServers('Server B');
    const w = humanWallet(g);
    await signInA(g, ALICE, w);

    // B learns nothing until she brings it: its check, its links, its roles.
    const check = await checkIn(g, b, ALICE);
    expect(seen(check)).toContain('has no proven web3 identity in this server');
    expect(seen(check)).not.toContain(w.address);
    expect(await linksIn(g, b, ALICE)).toEqual([]);
    expect(holds(g, b, ALICE)).toBe(false);
    expect(await exportOf(g, b)).not.toContain(w.address);

    // The attack: Bob asks B for her wallet. He must sign (he cannot), nothing is linked for him.
    const bobs = await verifyIn(g, b, BOB, w.wallet.address);
    expect(signingLinkIn(bobs)).toBeDefined();
    expect(await linksIn(g, b, BOB)).toEqual([]);
    expect(holds(g, b, BOB)).toBe(false);

    // The honest member: linked at once, no signing link, the reply says it was proven before.
    const brought = await verifyIn(g, b, ALICE, w.wallet.address);
    expect(isEphemeral(brought)).toBe(true);
    expect(embedOf(brought).title).toBe('Verified');
    expect(seen(brought)).toContain(
      'was proven before by your own signature and now counts in this server too',
    );
    expect(signingLinkIn(brought)).toBeUndefined();
    expect(JSON.stringify(brought.components)).toContain('Use my proofs in all my servers');
    expect(holds(g, b, ALICE)).toBe(true);
    const [link] = await linksIn(g, b, ALICE);
    expect(link).toMatchObject({ identity: w.address, proofMethod: 'signature', address: w.address });

    // Now B's check shows it.
    const after = await checkIn(g, b, ALICE);
    expect(seen(after)).toContain(w.address);
    expect(await exportOf(g, b)).toContain(w.address);
  });

  it('/verify with no identity lists her proof as "Use X here"; one click links it; a member with none is told how to prove one', async () => {
    const [g, b] = await startWithServers('Server B');
    const w = humanWallet(g);
    await signInA(g, ALICE, w);

    const none = await runIn(g, b, BOB, 'verify');
    expect(isEphemeral(none)).toBe(true);
    expect(embedOf(none).title).toBe('No proof by signature yet');
    expect(JSON.stringify(none.components)).toContain('Prove a new identity');
    expect(JSON.stringify(none.components)).not.toContain(w.address);

    const listed = await runIn(g, b, ALICE, 'verify');
    expect(isEphemeral(listed)).toBe(true);
    expect(embedOf(listed).title).toBe('Your proven identities');
    expect(JSON.stringify(listed.components)).toContain(`Use ${w.address} here`);
    expect(await linksIn(g, b, ALICE)).toEqual([]);

    // Before she brings it, her suggestions in B start with her own proof; Bob is never offered it.
    const typed = async (userId: string) => {
      const result = await g.h.discord.typeInOption({
        name: 'verify',
        focused: 'identity',
        value: '',
        userId,
        guildId: b.id,
        options: [],
      });
      return ((result.callbacks[0]?.data?.choices ?? []) as { value: string }[]).map((c) => c.value);
    };
    expect((await typed(ALICE))[0]).toBe(w.address);
    expect(await typed(BOB)).not.toContain(w.address);

    const clicked = visibleMessage(
      await g.h.click(listed, `verify|use|${w.address}`, undefined, { userId: ALICE }),
    );
    await g.gating.service.idle(b.id);
    expect(seen(clicked)).toContain('now counts in this server too');
    expect(holds(g, b, ALICE)).toBe(true);
    expect((await linksIn(g, b, ALICE)).map((l) => l.identity)).toEqual([w.address]);
  });

  it('/unverify in B leaves A untouched; everywhere:true (the default in a DM) removes it in A too, and from the account', async () => {
    const [g, b] = await startWithServers('Server B');
    const a = serverA(g);
    const w = humanWallet(g);
    await signInA(g, ALICE, w);
    await verifyIn(g, b, ALICE, w.wallet.address);
    expect(holds(g, b, ALICE)).toBe(true);

    const here = await runIn(g, b, ALICE, 'unverify', [text('identity', w.address)]);
    expect(embedOf(here).title).toBe('Unlinked');
    expect(await linksIn(g, b, ALICE)).toEqual([]);
    await waitFor(() => !holds(g, b, ALICE), 'the role to leave B');
    expect((await linksIn(g, a, ALICE)).map((l) => l.identity)).toEqual([w.address]);
    expect(holds(g, a, ALICE)).toBe(true);
    expect((await g.gating.store.accountProofsOf(ALICE)).map((p) => p.subject)).toEqual([w.address]);

    // Brought back in one command, then removed everywhere from a DM with the bot.
    await verifyIn(g, b, ALICE, w.wallet.address);
    expect(holds(g, b, ALICE)).toBe(true);
    const everywhere = await runIn(g, null, ALICE, 'unverify', [text('identity', w.address)]);
    await g.gating.service.idle(a.id);
    await g.gating.service.idle(b.id);
    expect(seen(everywhere)).toContain('removed from your account and from 2 servers');
    expect(await linksIn(g, a, ALICE)).toEqual([]);
    expect(await linksIn(g, b, ALICE)).toEqual([]);
    expect(await g.gating.store.accountProofsOf(ALICE)).toEqual([]);
    await waitFor(() => !holds(g, a, ALICE) && !holds(g, b, ALICE), 'the roles to leave A and B');

    // Gone everywhere: B asks for a signature again.
    expect(signingLinkIn(await verifyIn(g, b, ALICE, w.wallet.address))).toBeDefined();
  });

  it('another account that signs for her wallet itself takes it everywhere; without its own signature it gets nothing', async () => {
    const [g, b, c] = await startWithServers('Server B', 'Server C');
    const w = humanWallet(g);
    await signInA(g, ALICE, w);
    await verifyIn(g, b, ALICE, w.wallet.address);
    expect(holds(g, b, ALICE)).toBe(true);

    // Bob's account asks C for her wallet: a signing link, nothing linked (the attack without the key).
    expect(signingLinkIn(await verifyIn(g, c, BOB, w.wallet.address))).toBeDefined();
    expect(await linksIn(g, c, BOB)).toEqual([]);

    // An alt holding the same key signs in A: the wallet now backs his account, in every server.
    await signInA(g, BOB, w);
    expect((await g.gating.store.accountProofsOf(BOB)).map((p) => p.subject)).toEqual([w.address]);
    expect(await g.gating.store.accountProofsOf(ALICE)).toEqual([]);
    await g.gating.service.idle(b.id);
    expect(await linksIn(g, b, ALICE)).toEqual([]);
    await waitFor(() => !holds(g, b, ALICE), 'her role to leave B');
    // She can no longer bring it: C asks her to sign.
    expect(signingLinkIn(await verifyIn(g, c, ALICE, w.wallet.address))).toBeDefined();
  });

  it('a record that no longer names her is not carried to another server; one that still does is read again and linked', async () => {
    const [g, b, c] = await startWithServers('Server B', 'Server C');
    const address = addIdentity(g, 'alice.eth', { discordHandle: 'alice', human: true });
    const inA = await verifyIn(g, serverA(g), ALICE, 'alice.eth');
    expect(embedOf(inA).title).toBe('Verified');

    // Control: in B the record still names her, read again there.
    const inB = await verifyIn(g, b, ALICE, 'alice.eth');
    expect(embedOf(inB).title).toBe('Verified');
    expect((await linksIn(g, b, ALICE))[0]?.proofMethod).toBe('record');
    expect(await g.gating.store.accountProofsOf(ALICE)).toEqual([]);

    // The record now names someone else: C gets no link, only a signing link for the wallet.
    g.h.upstream.world.addProfile(ensProfile('alice.eth', address, 'mallory'));
    const inC = await verifyIn(g, c, ALICE, 'alice.eth');
    expect(embedOf(inC).title).not.toBe('Verified');
    expect(signingLinkIn(inC)).toBeDefined();
    expect(await linksIn(g, c, ALICE)).toEqual([]);
    expect(holds(g, c, ALICE)).toBe(false);
  });

  it('with share:all-servers, joining C gives her the role with no command; a member who did not opt in gets nothing', async () => {
    const g = await startGating();
    await setup(g);
    const c = await addServer(g, 'Server C', []);
    const alices = humanWallet(g);
    const bobs = humanWallet(g);
    await signInA(g, ALICE, alices);
    await signInA(g, BOB, bobs);
    const shared = await runIn(g, serverA(g), ALICE, 'verify', [text('share', 'all-servers')]);
    expect(embedOf(shared).title).toBe('Sharing is on');

    const join = async (userId: string, username: string) => {
      const joined = memberJoined(g.h.bot.client, c.id, userId);
      g.h.discord.addMember(c.id, { id: userId, username }, { dispatchJoin: true });
      await joined;
    };
    await join(BOB, 'bob');
    await join(ALICE, 'alice');
    await waitFor(() => holds(g, c, ALICE), 'her role in C', 60_000);
    expect((await linksIn(g, c, ALICE)).map((l) => [l.identity, l.proofMethod])).toEqual([
      [alices.address, 'signature'],
    ]);
    await g.gating.service.idle(c.id);
    expect(await linksIn(g, c, BOB)).toEqual([]);
    expect(holds(g, c, BOB)).toBe(false);

    // /whoami in A lists her proof with the servers it counts in.
    const whoami = await runIn(g, serverA(g), ALICE, 'whoami');
    expect(seen(whoami)).toContain('Proven by your signature');
    expect(seen(whoami)).toMatch(
      /counts in \*\*E2E Guild\*\*, \*\*Server C\*\*|counts in \*\*Server C\*\*, \*\*E2E Guild\*\*/,
    );

    // Bob turns sharing on with the button under a proof's answer: now his proof follows him to C too.
    const bobsAnswer = await verifyIn(g, serverA(g), BOB, bobs.wallet.address);
    const shareClick = visibleMessage(
      await g.h.click(bobsAnswer, 'verify|share', undefined, { userId: BOB }),
    );
    await g.gating.service.idle(c.id);
    expect(embedOf(shareClick).title).toBe('Sharing is on');
    expect(seen(shareClick)).toContain('1 server added now');
    await waitFor(() => holds(g, c, BOB), 'his role in C after sharing', 60_000);

    // share:this-server turns it off: a later server learns nothing by itself.
    const off = await runIn(g, serverA(g), ALICE, 'verify', [text('share', 'this-server')]);
    expect(embedOf(off).title).toBe('Sharing is off');
    expect(await g.gating.store.sharesProofs(ALICE)).toBe(false);
  });
});
