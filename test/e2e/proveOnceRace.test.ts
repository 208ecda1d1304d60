/**
 * Prove once, bring it anywhere (issue #36) across processes: two shard processes (`node
 * src/app/main.js`, SHARD_COUNT=2, one shard each) on one PostgreSQL, a gating server on each. A member
 * whose account proved a wallet by signature brings it to both servers at the same moment, each
 * `/verify` answered by the process that serves its server: both succeed, and nothing is linked twice,
 * not even when she sends each `/verify` twice at once.
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
import { ALICE, BOB, humanRoleSettings, visibleMessage } from './harness.ts';
import type { NodeProcess } from './processes.ts';
import { allShardsReady, runShardManager, schemaDatabaseUrl, tearDownShardedRun } from './shardManager.ts';

const SCHEMA = `prove_once_race_${process.pid}`;
const OWNER = '310000000000000001';
const WALLET = '0x00000000000000000000000000000000000036aa';

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
  upstream.world.setCredentials(WALLET, gatingCredentials(WALLET, { human: true }));
  discord.addUser({ id: OWNER, username: 'owner' });
  const store = await openPostgresStore(POSTGRES_URL, { schema: SCHEMA });
  for (const shard of [0, 1]) {
    const guild = discord.addGuild({
      id: snowflakeOnShard(shard, 2),
      name: `Shard ${shard}`,
      ownerId: OWNER,
    });
    discord.addMember(guild.id, { id: ALICE, username: 'alice' });
    discord.addMember(guild.id, { id: BOB, username: 'bob' });
    const human = discord.addRole(guild.id, { name: 'Human', position: 1 });
    await store.saveGuildSettings(humanRoleSettings(guild.id, human.id));
    guilds.push({ guild, humanRoleId: human.id });
  }
  // What her signature in a third server left: the wallet belongs to her account.
  await store.saveAccountProof({
    subject: WALLET,
    userId: ALICE,
    identity: WALLET,
    platform: 'ethereum',
    address: WALLET,
    provenAt: Date.now() - 60_000,
  });
  await store.close();
  manager = runShardManager({ discord, upstream }, workDir, {
    DATABASE_URL: schemaDatabaseUrl(SCHEMA),
    GATING_ENABLED: 'true',
    PUBLIC_URL: 'https://verify.example.test',
    HTTP_PORT: '0',
    SHARD_COUNT: '2',
    USER_COOLDOWN_COMMANDS: '100',
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
