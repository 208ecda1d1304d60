/**
 * One wallet, one member, under concurrency (issue #15, point 4): 20 accounts complete a signature by
 * the same wallet at the same moment, on the embedded SQLite and on PostgreSQL, and on PostgreSQL across
 * two bot processes sharing it. The store's registry decides: exactly one account holds the wallet, every
 * other gets a clear refusal, and roles follow. A takeover that races the earlier holder's role sync still
 * leaves that member without the wallet's role after one pass. A sync or a pass that reads the queue and
 * the member while the worker finishes a change sees that change in one of the two, forced here by
 * holding the worker's claims and letting it finish inside the queue read.
 */
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { FakeMessage } from '../../fakes/discord/server.ts';
import { createDatabase } from '../../fakes/localPostgres.ts';
import { gatingCredentials } from '../../fakes/web3bio/builders.ts';
import { openPostgresStore } from '../../src/store/postgresStore.ts';
import {
  addMember,
  closeGating,
  type GatingHarness,
  gatingCommandRun,
  hasRole,
  PUBLIC_URL,
  seen,
  setup,
  signFromReply,
  startGating,
  startSecondBot,
  waitFor,
} from './gatingHarness.ts';
import { visibleMessage } from './harness.ts';

const ACCOUNTS = 20;
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  await closeGating();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const STORES = [
  ['SQLite', false],
  ['PostgreSQL', true],
] as const;

/** A gating bot set up on the embedded SQLite, or on a PostgreSQL database of its own. */
async function startOn(postgres: boolean): Promise<GatingHarness> {
  const g = await startGating({ env: postgres ? { DATABASE_URL: await freshDatabase() } : {} });
  await setup(g);
  return g;
}

/** A database of its own on the local PostgreSQL, dropped after the test. */
async function freshDatabase(): Promise<string> {
  const database = await createDatabase('wallet_race');
  cleanups.push(database.drop);
  return database.url;
}

interface Signed {
  userId: string;
  url: string;
  body: string;
}

/** Each account runs `/verify` of the wallet's address; the wallet signs every link's message. */
async function signedLinks(
  g: GatingHarness,
  wallet: ReturnType<typeof privateKeyToAccount>,
  accounts: string[],
): Promise<Signed[]> {
  const signed: Signed[] = [];
  for (const userId of accounts) {
    const reply = visibleMessage(await g.h.run('verify', { identity: wallet.address }, { userId }));
    const url = linkOf(reply).replace(PUBLIC_URL, g.gating.verifyUrl);
    const { message } = (await (await fetch(`${url}/message`)).json()) as { message: string };
    signed.push({
      userId,
      url,
      body: JSON.stringify({ message, signature: await wallet.signMessage({ message }) }),
    });
  }
  return signed;
}

function linkOf(reply: FakeMessage): string {
  const button = (reply.components?.[0] as { components: { url?: string }[] } | undefined)?.components[0];
  if (!button?.url?.startsWith(`${PUBLIC_URL}/verify/`)) throw new Error(`no signing link: ${seen(reply)}`);
  return button.url;
}

/** Every completion POSTed at once (to `base` instead of the link's own server when given). */
async function completeAtOnce(
  signed: Signed[],
  base?: (i: number) => string | undefined,
): Promise<{ userId: string; status: number; body: { ok: boolean; reason?: string; message?: string } }[]> {
  return Promise.all(
    signed.map(async (s, i) => {
      const other = base?.(i);
      const url = other === undefined ? s.url : `${other}${new URL(s.url).pathname}`;
      const answer = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: s.body,
      });
      return { userId: s.userId, status: answer.status, body: (await answer.json()) as { ok: boolean } };
    }),
  );
}

async function members(g: GatingHarness, prefix: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i += 1) ids.push(await addMember(g, `${prefix}${i}`));
  return ids;
}

function humanWallet(g: GatingHarness): ReturnType<typeof privateKeyToAccount> {
  const wallet = privateKeyToAccount(generatePrivateKey());
  const address = wallet.address.toLowerCase();
  g.h.upstream.world.setCredentials(address, gatingCredentials(address, { human: true }));
  return wallet;
}

/** Active links of the guild backed by the address, read from the bot's store. */
async function holdersOf(g: GatingHarness, address: string): Promise<string[]> {
  const links = await g.gating.store.getAddressLinks(g.guildId, address.toLowerCase());
  return links.filter((l) => l.releasedAt === null).map((l) => l.userId);
}

async function until(condition: () => Promise<boolean>, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * Forces a change to finish between a sync's (or a pass's) reads: the worker claims nothing until the
 * first queue read `reads` matches; that read lets it claim, waits until `finished`, then reads.
 */
function finishInsideQueueRead(
  g: GatingHarness,
  what: string,
): {
  armed: (reads: (userId?: string) => boolean, finished: () => Promise<boolean>) => void;
  raced: () => boolean;
} {
  const { store } = g.gating;
  let gateOpen = false;
  let raced = false;
  const claim = store.claimRoleChanges.bind(store);
  vi.spyOn(store, 'claimRoleChanges').mockImplementation(async (...args) => (gateOpen ? claim(...args) : []));
  const open = store.openRoleChanges.bind(store);
  return {
    armed(reads, finished) {
      vi.spyOn(store, 'openRoleChanges').mockImplementation(async (guildId, userId) => {
        if (reads(userId) && !raced) {
          raced = true;
          gateOpen = true;
          await until(finished, what, 10_000);
        }
        return open(guildId, userId);
      });
    },
    raced: () => raced,
  };
}

function expectOneWinner(
  answers: { userId: string; status: number; body: { ok: boolean; reason?: string; message?: string } }[],
): string {
  const won = answers.filter((a) => a.body.ok);
  expect(won).toHaveLength(1);
  const lost = answers.filter((a) => !a.body.ok);
  expect(lost).toHaveLength(answers.length - 1);
  for (const a of lost) {
    expect(a.status).toBe(409);
    expect(a.body.reason).toBe('raced');
    expect(a.body.message).toContain('another account proved this wallet after your link was made');
  }
  return won[0]?.userId ?? '';
}

describe.each(STORES)('20 accounts complete one wallet at the same moment (%s)', (_store, postgres) => {
  it('exactly one holds the wallet and its role; the 19 others are refused with the reason', async () => {
    const g = await startOn(postgres);
    const wallet = humanWallet(g);
    const accounts = await members(g, 'racer', ACCOUNTS);
    const signed = await signedLinks(g, wallet, accounts);

    const winner = expectOneWinner(await completeAtOnce(signed));
    expect(await holdersOf(g, wallet.address)).toEqual([winner]);
    expect(
      (await g.gating.store.getHolding(g.guildId, 'address', wallet.address.toLowerCase()))?.userId,
    ).toBe(winner);
    await g.gating.service.idle(g.guildId);
    await waitFor(() => hasRole(g, winner, g.humanRoleId), 'the winner to get the human role');
    expect(accounts.filter((id) => hasRole(g, id, g.humanRoleId))).toEqual([winner]);
  }, 60_000);
});

describe('a takeover racing the earlier holder’s role sync', () => {
  it.each(STORES)(
    '%s: the earlier holder loses the wallet’s role within one pass',
    async (_store, postgres) => {
      const g = await startOn(postgres);
      const wallet = humanWallet(g);
      const [alice, bob] = await members(g, 'holder', 2);
      if (!alice || !bob) throw new Error('no members');
      const address = wallet.address.toLowerCase();

      // Alice's proof lands, and the role sync that follows it reads her links, then waits on a slow lookup…
      g.h.upstream.addFault({
        match: new RegExp(`/credential/${address}`, 'i'),
        times: 1,
        action: { kind: 'latency', ms: 1_500 },
      });
      const aliceReply = visibleMessage(
        await g.h.run('verify', { identity: wallet.address }, { userId: alice }),
      );
      const aliceSigned = signFromReply(g, aliceReply, wallet);
      await until(async () => (await holdersOf(g, address)).includes(alice), 'Alice’s link to be stored');

      // …while Bob signs with the wallet and takes it over.
      const bobReply = visibleMessage(await g.h.run('verify', { identity: wallet.address }, { userId: bob }));
      expect(await signFromReply(g, bobReply, wallet)).toMatchObject({ body: { ok: true } });
      expect(await aliceSigned).toMatchObject({ body: { ok: true } });
      await g.gating.service.idle(g.guildId);

      // One automated pass later, Alice holds nothing the wallet gave; Bob holds it.
      await gatingCommandRun(g, 'recheck');
      await g.gating.service.idle(g.guildId);
      await waitFor(() => !hasRole(g, alice, g.humanRoleId), 'Alice to lose the human role', 15_000);
      expect(hasRole(g, bob, g.humanRoleId)).toBe(true);
      expect(await holdersOf(g, wallet.address)).toEqual([bob]);
    },
    60_000,
  );
});

describe('a takeover while the worker finishes the earlier holder’s add', () => {
  it.each(STORES)(
    '%s: the role the add just gave still goes, whichever the sync reads first',
    async (_store, postgres) => {
      const g = await startOn(postgres);
      const wallet = humanWallet(g);
      const [alice, bob] = await members(g, 'finisher', 2);
      if (!alice || !bob) throw new Error('no members');
      const { store } = g.gating;

      // The worker claims nothing yet: Alice's add waits in the queue…
      const race = finishInsideQueueRead(g, 'the worker to finish Alice’s add');
      const aliceReply = visibleMessage(
        await g.h.run('verify', { identity: wallet.address }, { userId: alice }),
      );
      expect(await signFromReply(g, aliceReply, wallet)).toMatchObject({ body: { ok: true } });
      expect((await store.openRoleChanges(g.guildId, alice)).map((c) => c.op)).toEqual(['add']);
      expect(hasRole(g, alice, g.humanRoleId)).toBe(false);

      // …until the sync that follows Bob's takeover reads her queue: then the worker applies the add and
      // finishes it, between that sync's two reads of the queue and of the member.
      race.armed(
        (userId) => userId === alice,
        async () =>
          hasRole(g, alice, g.humanRoleId) && (await store.openRoleChanges(g.guildId, alice)).length === 0,
      );
      const bobReply = visibleMessage(await g.h.run('verify', { identity: wallet.address }, { userId: bob }));
      expect(await signFromReply(g, bobReply, wallet)).toMatchObject({ body: { ok: true } });
      await g.gating.service.idle(g.guildId);

      expect(race.raced()).toBe(true);
      await waitFor(() => !hasRole(g, alice, g.humanRoleId), 'Alice to lose the human role', 10_000);
      await waitFor(() => hasRole(g, bob, g.humanRoleId), 'Bob to get the human role', 10_000);
      expect(await holdersOf(g, wallet.address)).toEqual([bob]);
    },
    60_000,
  );
});

describe('a re-check pass while the worker finishes a member’s removal', () => {
  it.each(STORES)(
    '%s: the member the removal left without a role they qualify for again gets it back',
    async (_store, postgres) => {
      const g = await startOn(postgres);
      const wallet = humanWallet(g);
      const address = wallet.address.toLowerCase();
      const [carol] = await members(g, 'flapper', 1);
      if (!carol) throw new Error('no member');
      const { store } = g.gating;
      const reply = visibleMessage(await g.h.run('verify', { identity: wallet.address }, { userId: carol }));
      expect(await signFromReply(g, reply, wallet)).toMatchObject({ body: { ok: true } });
      await g.gating.service.idle(g.guildId);
      await waitFor(() => hasRole(g, carol, g.humanRoleId), 'Carol to get the human role');

      // The wallet loses its human signal for a moment: a moderator's re-check queues the removal, which
      // waits (the worker claims nothing yet)…
      const race = finishInsideQueueRead(g, 'the worker to finish Carol’s removal');
      g.h.upstream.world.setCredentials(address, gatingCredentials(address, { human: false }));
      await g.gating.service.members.recheckMember(g.guildId, carol, 'test: signal gone');
      expect((await store.openRoleChanges(g.guildId, carol)).map((c) => c.op)).toEqual(['remove']);

      // …the signal is back, and a whole-server pass starts: the worker removes the role and finishes the
      // change between the pass's reads of the queue and of the member list.
      g.h.upstream.world.setCredentials(address, gatingCredentials(address, { human: true }));
      race.armed(
        (userId) => userId === undefined,
        async () =>
          !hasRole(g, carol, g.humanRoleId) && (await store.openRoleChanges(g.guildId, carol)).length === 0,
      );
      await gatingCommandRun(g, 'recheck');
      await g.gating.service.idle(g.guildId);

      expect(race.raced()).toBe(true);
      await waitFor(() => hasRole(g, carol, g.humanRoleId), 'Carol to get the human role back', 10_000);
    },
    60_000,
  );
});

describe('two bot processes sharing one PostgreSQL', () => {
  it('20 completions split across both signing servers: one account holds the wallet, 19 are refused', async () => {
    const databaseUrl = await freshDatabase();
    const g = await startGating({ env: { DATABASE_URL: databaseUrl } });
    await setup(g);
    const wallet = humanWallet(g);
    const accounts = await members(g, 'split', ACCOUNTS);
    const signed = await signedLinks(g, wallet, accounts);

    const second = await startSecondBot(g, { DATABASE_URL: databaseUrl, GATING_ENABLED: 'true' });
    cleanups.push(second.stop);

    const answers = await completeAtOnce(signed, (i) => (i % 2 === 0 ? second.url : undefined));
    const winner = expectOneWinner(answers);
    const store = await openPostgresStore(databaseUrl);
    try {
      const links = await store.getAddressLinks(g.guildId, wallet.address.toLowerCase());
      expect(links.filter((l) => l.releasedAt === null).map((l) => l.userId)).toEqual([winner]);
    } finally {
      await store.close();
    }
    await waitFor(() => hasRole(g, winner, g.humanRoleId), 'the winner to get the human role', 15_000);
    expect(accounts.filter((id) => hasRole(g, id, g.humanRoleId))).toEqual([winner]);
  }, 90_000);
});
