/**
 * Prove once, bring it anywhere (issue #36) across processes: two shard processes (`node
 * src/app/main.js`, SHARD_COUNT=2, one shard each) on one PostgreSQL, a gating server on each. A member
 * whose account proved a wallet by signature brings it to both servers at the same moment, each
 * `/verify` answered by the process that serves its server: both succeed, and nothing is linked twice,
 * not even when she sends each `/verify` twice at once. A member who turns sharing on in one server
 * gets her proofs linked in the other process's server within its pick-up (GATING_SHARING_PICKUP_SECONDS,
 * 1 s here), with no command there; a member who did not opt in gets nothing there. Her `/unverify
 * everywhere:true` in one server removes the proof in the other process's server too, whose due-check
 * pass (GATING_DUE_CHECK_SECONDS, 1 s here) takes the role away at once, as her own removal. A proof she
 * makes while sharing follows to both servers by the same pick-up.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeDiscord, FakeGuild } from '../../fakes/discord/server.ts';
import { startFakeDiscord } from '../../fakes/discord/server.ts';
import { snowflakeOnShard } from '../../fakes/discord/snowflake.ts';
import { gatingCredentials } from '../../fakes/web3bio/builders.ts';
import { type FakeWeb3Bio, startFakeWeb3Bio } from '../../fakes/web3bio/server.ts';
import { openPostgresStore } from '../../src/store/index.ts';
import { dropPostgresSchema, POSTGRES_URL } from '../store/harness.ts';
import { ALICE, BOB, humanRoleSettings, visibleMessage, walletAccountProof } from './harness.ts';
import type { NodeProcess } from './processes.ts';
import { allShardsReady, runShardManager, schemaDatabaseUrl, tearDownShardedRun } from './shardManager.ts';

const SCHEMA = `prove_once_race_${process.pid}`;
const OWNER = '310000000000000001';
const WALLET = '0x00000000000000000000000000000000000036aa';
/** Carol shares her proofs; Dave, who proved his wallet too, does not. */
const CAROL = '310000000000000003';
const DAVE = '310000000000000004';
const WALLETS = {
  [CAROL]: '0x00000000000000000000000000000000000036cc',
  [DAVE]: '0x00000000000000000000000000000000000036dd',
};
/** A second wallet of Carol's, with no human credential: linked, it keeps her in B but earns nothing. */
const CAROL_PLAIN = '0x00000000000000000000000000000000000036ce';

let discord: FakeDiscord;
let upstream: FakeWeb3Bio;
let manager: NodeProcess;
let workDir: string;
const guilds: { guild: FakeGuild; humanRoleId: string }[] = [];

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'e2e-prove-once-race-'));
  await dropPostgresSchema(SCHEMA);
  discord = await startFakeDiscord({ heartbeatIntervalMs: 500 });
  upstream = await startFakeWeb3Bio();
  for (const wallet of [WALLET, ...Object.values(WALLETS)])
    upstream.world.setCredentials(wallet, gatingCredentials(wallet, { human: true }));
  upstream.world.setCredentials(CAROL_PLAIN, gatingCredentials(CAROL_PLAIN, { human: false }));
  discord.addUser({ id: OWNER, username: 'owner' });
  for (const id of [CAROL, DAVE]) discord.addUser({ id, username: id === CAROL ? 'carol' : 'dave' });
  const store = await openPostgresStore(POSTGRES_URL, { schema: SCHEMA });
  for (const shard of [0, 1]) {
    const guild = discord.addGuild({
      id: snowflakeOnShard(shard, 2),
      name: `Shard ${shard}`,
      ownerId: OWNER,
    });
    discord.addMember(guild.id, { id: ALICE, username: 'alice' });
    discord.addMember(guild.id, { id: BOB, username: 'bob' });
    discord.addMember(guild.id, { id: CAROL, username: 'carol' });
    discord.addMember(guild.id, { id: DAVE, username: 'dave' });
    const human = discord.addRole(guild.id, { name: 'Human', position: 1 });
    await store.saveGuildSettings(humanRoleSettings(guild.id, human.id));
    guilds.push({ guild, humanRoleId: human.id });
  }
  // What her signature in a third server left: the wallet belongs to her account.
  await store.saveAccountProof(walletAccountProof(ALICE, WALLET));
  for (const [userId, wallet] of Object.entries(WALLETS))
    await store.saveAccountProof(walletAccountProof(userId, wallet));
  await store.close();
  manager = runShardManager({ discord, upstream }, workDir, {
    DATABASE_URL: schemaDatabaseUrl(SCHEMA),
    GATING_ENABLED: 'true',
    PUBLIC_URL: 'https://verify.example.test',
    HTTP_PORT: '0',
    SHARD_COUNT: '2',
    USER_COOLDOWN_COMMANDS: '100',
    GATING_SHARING_PICKUP_SECONDS: '1',
    GATING_DUE_CHECK_SECONDS: '1',
  });
  await allShardsReady(manager);
}, 90_000);

afterAll(() => tearDownShardedRun({ manager, discord, upstream, schema: SCHEMA, workDir }));

const verifyIn = (guildId: string, userId: string) =>
  discord.runCommand({
    name: 'verify',
    userId,
    guildId,
    options: [{ type: 3, name: 'identity', value: WALLET }],
    timeoutMs: 20_000,
  });

const holds = (guildId: string, roleId: string, userId: string) =>
  discord.state.guilds.get(guildId)?.members.get(userId)?.roles.includes(roleId) ?? false;

describe('bringing one proof to two servers at once, from two processes on PostgreSQL', () => {
  it('both succeed, each in the process of its shard; nothing is linked twice; another account still must sign', async () => {
    const [a, b] = guilds;
    if (!a || !b) throw new Error('two servers expected');
    const answers = await Promise.all([
      verifyIn(a.guild.id, ALICE),
      verifyIn(b.guild.id, ALICE),
      verifyIn(a.guild.id, ALICE),
      verifyIn(b.guild.id, ALICE),
    ]);
    for (const answer of answers)
      expect(JSON.stringify(visibleMessage(answer).embeds)).toContain(
        'was proven before by your own signature',
      );

    const store = await openPostgresStore(POSTGRES_URL, { schema: SCHEMA });
    try {
      for (const { guild } of [a, b]) {
        const links = await store.getUserLinks(guild.id, ALICE);
        expect(links.map((l) => [l.identity, l.proofMethod, l.releasedAt])).toEqual([
          [WALLET, 'signature', null],
        ]);
        expect((await store.getAddressLinks(guild.id, WALLET)).map((l) => l.userId)).toEqual([ALICE]);
      }
    } finally {
      await store.close();
    }
    const deadline = Date.now() + 20_000;
    while (!(holds(a.guild.id, a.humanRoleId, ALICE) && holds(b.guild.id, b.humanRoleId, ALICE))) {
      if (Date.now() > deadline) throw new Error('the human role in both servers did not come');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    // Each server's /verify was answered by its own shard, one shard per process (SHARDS_PER_PROCESS=1).
    const answered = manager
      .logLines()
      .filter((l) => l.msg === 'interaction answered' && l.command === 'verify' && l.userId === ALICE);
    for (const [shard, { guild }] of [a, b].entries())
      expect(answered.filter((l) => l.guildId === guild.id).map((l) => l.shard)).toEqual([shard, shard]);

    // Bob asking for her wallet in either server is sent to sign, and holds nothing.
    const bobs = visibleMessage(await verifyIn(a.guild.id, BOB));
    expect(JSON.stringify(bobs.components)).toContain('https://verify.example.test/verify/');
    expect(holds(a.guild.id, a.humanRoleId, BOB)).toBe(false);
  }, 90_000);
});

describe('sharing turned on in a server one process serves, picked up by the other', () => {
  it("her proof is linked in the other process's server with no command there, once; Dave, who did not opt in, gets nothing", async () => {
    const [a, b] = guilds;
    if (!a || !b) throw new Error('two servers expected');
    const carolWallet = WALLETS[CAROL];
    const shared = visibleMessage(
      await discord.runCommand({
        name: 'verify',
        userId: CAROL,
        guildId: a.guild.id,
        options: [{ type: 3, name: 'share', value: 'all-servers' }],
        timeoutMs: 20_000,
      }),
    );
    const said = JSON.stringify(shared.embeds);
    expect(said).toContain('Sharing is on');
    // The process that answered serves A only: B is not among the servers it linked at once.
    expect(said).not.toContain('2 servers added now');

    const deadline = Date.now() + 30_000;
    while (!holds(b.guild.id, b.humanRoleId, CAROL)) {
      if (Date.now() > deadline) throw new Error("Carol's role in B did not come");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const pickedUp = manager
      .logLines()
      .filter((l) => l.msg === 'shared proofs picked up' && l.userId === CAROL);
    // Linked in B by the pick-up of the process serving B (shard 1), not by the one that answered.
    expect(pickedUp.map((l) => l.shards)).toContainEqual([1]);
    // A few more looks of both processes: nothing more happens.
    await new Promise((resolve) => setTimeout(resolve, 2_500));

    const store = await openPostgresStore(POSTGRES_URL, { schema: SCHEMA });
    try {
      for (const { guild } of [a, b]) {
        const links = await store.getUserLinks(guild.id, CAROL);
        expect(links.map((l) => [l.identity, l.proofMethod, l.releasedAt])).toEqual([
          [carolWallet, 'signature', null],
        ]);
        // The control: Dave's proof, never shared, is in neither server.
        expect(await store.getUserLinks(guild.id, DAVE)).toEqual([]);
      }
    } finally {
      await store.close();
    }
    expect(holds(a.guild.id, a.humanRoleId, CAROL)).toBe(true);
    for (const { guild, humanRoleId } of [a, b]) expect(holds(guild.id, humanRoleId, DAVE)).toBe(false);
  }, 60_000);

  it("a proof she makes while sharing follows to both servers; /unverify identity:X everywhere:true in A removes X in B too, and B's process takes the role away at once, though the new proof keeps her linked there", async () => {
    const [a, b] = guilds;
    if (!a || !b) throw new Error('two servers expected');
    for (const { guild, humanRoleId } of [a, b]) expect(holds(guild.id, humanRoleId, CAROL)).toBe(true);
    // She proves a second wallet (no human credential) by signature in a third server: she shares, so
    // each process's pick-up links it in its own server, with no command.
    const store = await openPostgresStore(POSTGRES_URL, { schema: SCHEMA });
    try {
      await store.saveAccountProof(walletAccountProof(CAROL, CAROL_PLAIN, Date.now()));
      const linkedIn = async (guildId: string) =>
        (await store.getUserLinks(guildId, CAROL))
          .filter((l) => l.releasedAt === null)
          .map((l) => l.identity);
      const followed = async () =>
        (await linkedIn(a.guild.id)).includes(CAROL_PLAIN) &&
        (await linkedIn(b.guild.id)).includes(CAROL_PLAIN);
      const deadlineNew = Date.now() + 20_000;
      while (!(await followed())) {
        if (Date.now() > deadlineNew) throw new Error('her new proof did not follow to A and B');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }

      const removed = visibleMessage(
        await discord.runCommand({
          name: 'unverify',
          userId: CAROL,
          guildId: a.guild.id,
          options: [
            { type: 3, name: 'identity', value: WALLETS[CAROL] },
            { type: 5, name: 'everywhere', value: true },
          ],
          timeoutMs: 20_000,
        }),
      );
      expect(JSON.stringify(removed.embeds)).toContain('from 2 servers');
      // Her own removal: A's process applies it at once, B's at its next due-check pass (1 s here), not
      // after the hour a loss found by an automated pass waits for confirmation.
      const deadline = Date.now() + 20_000;
      while (holds(a.guild.id, a.humanRoleId, CAROL) || holds(b.guild.id, b.humanRoleId, CAROL)) {
        if (Date.now() > deadline) throw new Error('her roles in A and B did not go');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      for (const { guild } of [a, b]) expect(await linkedIn(guild.id)).toEqual([CAROL_PLAIN]);
      expect(await store.sharesProofs(CAROL)).toBe(false);
    } finally {
      await store.close();
    }
  }, 60_000);
});
