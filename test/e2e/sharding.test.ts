/**
 * `npm start` with SHARD_COUNT, as an operator runs it for many servers: a shard manager and one process
 * per shard (`node src/app/main.js`), on one PostgreSQL, against the stand-in Discord (which routes each
 * guild to its shard like Discord) and the stand-in Web3.bio.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeDiscord, FakeGuild } from '../../fakes/discord/server.ts';
import { startFakeDiscord } from '../../fakes/discord/server.ts';
import { snowflakeOnShard } from '../../fakes/discord/snowflake.ts';
import { ensProfile, gatingCredentials } from '../../fakes/web3bio/builders.ts';
import { type FakeWeb3Bio, startFakeWeb3Bio } from '../../fakes/web3bio/server.ts';
import { openPostgresStore } from '../../src/store/index.ts';
import { dropPostgresSchema, POSTGRES_URL } from '../store/harness.ts';
import { ALICE, BOB, humanRoleSettings, type LogLine, visibleMessage } from './harness.ts';
import { freePort, type NodeProcess, repeatedTopLevelKeys, runNode } from './processes.ts';
import { allShardsReady, runShardManager, schemaDatabaseUrl, tearDownShardedRun } from './shardManager.ts';

const MAIN = fileURLToPath(new URL('../../src/app/main.js', import.meta.url));
const TOKEN = 'e2e-SHARDED-DISCORD-TOKEN-must-not-leak-93ac1';
const PUBLIC_URL = 'https://verify.example.org';
const SCHEMA = `shard_e2e_${process.pid}`;

let discord: FakeDiscord;
let upstream: FakeWeb3Bio;
let manager: NodeProcess;
let workDir: string;
const guilds: FakeGuild[] = [];
const humanRole: string[] = [];
let httpPort = 0;
let metricsPort = 0;

function readyLines(): LogLine[] {
  return manager.logLines().filter((l) => l.msg === 'bot ready');
}

/** Waits until `check` holds (the stand-ins are driven by other processes). */
async function until(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}\n${manager.output().stdout.slice(-4000)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

function hasRole(guild: FakeGuild, userId: string, roleId: string): boolean {
  return guild.members.get(userId)?.roles.includes(roleId) ?? false;
}

/** `/verify` by `userId` in `guild`, then the signature POSTed to the manager's verify server. */
async function verifyBySignature(
  guild: FakeGuild,
  userId: string,
  identity: string,
  beforeSigning?: () => Promise<void>,
) {
  const account = privateKeyToAccount(generatePrivateKey());
  upstream.world.addProfile(ensProfile(identity, account.address.toLowerCase()));
  upstream.world.setCredentials(identity, gatingCredentials(identity, { human: true }));
  const reply = visibleMessage(
    await discord.runCommand({
      name: 'verify',
      guildId: guild.id,
      userId,
      options: [{ type: 3, name: 'identity', value: identity }],
      timeoutMs: 10_000,
    }),
  );
  const button = (reply.components?.[0] as { components: { url?: string }[] } | undefined)?.components[0];
  const local = (button?.url ?? '').replace(PUBLIC_URL, `http://127.0.0.1:${httpPort}`);
  expect(local).toContain('/verify/');
  const { message } = (await (await fetch(`${local}/message`)).json()) as { message: string };
  const signature = await account.signMessage({ message });
  await beforeSigning?.();
  const answer = await fetch(local, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ message, signature }),
  });
  return { status: answer.status, body: (await answer.json()) as { ok: boolean; message?: string } };
}

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'e2e-shards-'));
  await dropPostgresSchema(SCHEMA);
  discord = await startFakeDiscord({ token: TOKEN, recommendedShards: 2, heartbeatIntervalMs: 500 });
  upstream = await startFakeWeb3Bio();
  const store = await openPostgresStore(POSTGRES_URL, { schema: SCHEMA });
  for (const shard of [0, 1]) {
    const guild = discord.addGuild({ id: snowflakeOnShard(shard, 2), name: `Shard ${shard} guild` });
    discord.addMember(guild.id, { id: ALICE, username: 'alice' });
    discord.addMember(guild.id, { id: BOB, username: 'bob' });
    const role = discord.addRole(guild.id, { name: 'Human', position: 1 });
    await store.saveGuildSettings(humanRoleSettings(guild.id, role.id));
    guilds.push(guild);
    humanRole.push(role.id);
  }
  await store.close();
  [httpPort, metricsPort] = [await freePort(), await freePort()];
  manager = runShardManager({ discord, upstream }, workDir, {
    DATABASE_URL: schemaDatabaseUrl(SCHEMA),
    GATING_ENABLED: 'true',
    PUBLIC_URL,
    HTTP_PORT: String(httpPort),
    METRICS_PORT: String(metricsPort),
    SHARD_COUNT: 'auto',
  });
  await allShardsReady(manager);
}, 90_000);

afterAll(() => tearDownShardedRun({ manager, discord, upstream, schema: SCHEMA, workDir }));

describe('SHARD_COUNT=auto with one shard per process', () => {
  it('asks Discord for the count, runs each shard in its own process, and each gets only its guilds', () => {
    const starting = manager.logLines().find((l) => l.msg === 'starting shards');
    expect(starting).toMatchObject({ shards: 2, shardsPerProcess: 1, processes: 2 });
    expect(discord.gatewayShards.map((s) => s.join('/')).sort()).toEqual(['0/2', '1/2']);
    const ready = readyLines();
    expect(ready.map((l) => (l.shards as number[]).join()).sort()).toEqual(['0', '1']);
    // Each process's own lines name its shards, and each saw one guild (its own).
    for (const line of ready) expect(line).toMatchObject({ guilds: 1, shardCount: 2, processes: 2 });
    expect(new Set(ready.map((l) => l.pid)).size).toBe(2);
    // Commands are deployed once, by `npm run deploy-commands`, never by a starting shard.
    expect(discord.requests.filter((r) => r.path.includes('/commands'))).toEqual([]);
  });

  it('answers commands in guilds of both shards, each logged with the shard it came through', async () => {
    for (const [shard, guild] of guilds.entries()) {
      const result = await discord.runCommand({
        name: 'whoami',
        guildId: guild.id,
        userId: ALICE,
        timeoutMs: 10_000,
      });
      expect(JSON.stringify(visibleMessage(result))).toContain('/verify');
      const logged = await manager.waitForLog(
        (l) => l.interactionId === result.interactionId && l.msg === 'interaction answered',
      );
      expect(logged).toMatchObject({ shard, shards: [shard] });
    }
  });

  it('a signature completed on the manager’s page is linked by the shard that owns the guild', async () => {
    const [, guild] = guilds;
    if (!guild) throw new Error('no guild on shard 1');
    const answer = await verifyBySignature(guild, ALICE, 'alice-shard.eth');
    expect(answer).toMatchObject({ status: 200, body: { ok: true } });
    expect(answer.body.message).toMatch(/^Verified/);
    await until(() => hasRole(guild, ALICE, humanRole[1] ?? ''), 'the human role on shard 1');
    const linked = await manager.waitForLog((l) => l.msg === 'signed proof linked by its shard');
    expect(linked).toMatchObject({ shards: [1], guildId: guild.id, userId: ALICE, ok: true });
  });

  it('a proof completed while its shard process is down waits in the store and is linked after the respawn', async () => {
    const [, guild] = guilds;
    if (!guild) throw new Error('no guild on shard 1');
    const owner = readyLines().find((l) => (l.shards as number[])[0] === 1);
    const oldPid = Number(owner?.pid);
    const answer = await verifyBySignature(guild, BOB, 'bob-shard.eth', async () => {
      process.kill(oldPid, 'SIGKILL');
      await manager.waitForLog((l) => l.msg === 'shard process exited; respawning');
    });
    expect(answer).toMatchObject({ status: 200, body: { ok: true } });
    await until(() => hasRole(guild, BOB, humanRole[1] ?? ''), 'the human role after the respawn', 60_000);
    // The shard logs the link once the store has its answer, which may be after the role edit.
    const linkedBy = await manager.waitForLog(
      (l) => l.msg === 'signed proof linked by its shard' && l.userId === BOB,
    );
    expect(linkedBy?.shards).toEqual([1]);
    expect(linkedBy?.pid).not.toBe(oldPid);
    // Linked once: one role edit, however the kill fell.
    const edits = discord.requests.filter(
      (r) => r.method === 'PUT' && r.path === `/guilds/${guild.id}/members/${BOB}/roles/${humanRole[1]}`,
    );
    expect(edits).toHaveLength(1);
  }, 90_000);

  it('serves /readyz and one /metrics summed over every process, with a gateway ping per shard', async () => {
    await until(
      () => manager.logLines().filter((l) => l.msg === 'all shards ready').length >= 2,
      'every shard ready again',
      60_000,
    );
    const ready = await fetch(`http://127.0.0.1:${metricsPort}/readyz`);
    expect(ready.status).toBe(200);
    // A respawned shard reports its ping after its first heartbeat is acknowledged.
    let text = '';
    let pings: string[] = [];
    const deadline = Date.now() + 10_000;
    while (pings.length < 2 && Date.now() < deadline) {
      text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      pings = text.split('\n').filter((l) => l.startsWith('discord_gateway_ping_seconds{'));
    }
    expect(pings.map((l) => /shard="(\d+)"/.exec(l)?.[1]).sort()).toEqual(['0', '1']);
    const answered = text
      .split('\n')
      .filter((l) => l.startsWith('bot_interactions_total{') && l.includes('command="whoami"'))
      .map((l) => Number(l.split(' ').at(-1)));
    // One /whoami per shard was answered; the process that answered shard 1's was killed since, so at least 1.
    expect(answered.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(1);
    expect(text).toMatch(/^process_resident_memory_bytes \d+/m);
  });

  it('writes each key once per log line (a shard process’s lines carry its shards once)', () => {
    expect(repeatedTopLevelKeys('{"shards":[0],"a":{"shards":1},"shards":[0]}')).toEqual(['shards']);
    const lines = manager
      .output()
      .stdout.split('\n')
      .filter((line) => line.startsWith('{'));
    expect(lines.some((line) => line.includes('"msg":"bot ready"'))).toBe(true);
    expect(lines.filter((line) => repeatedTopLevelKeys(line).length > 0)).toEqual([]);
  });

  it('stops on SIGTERM with every shard process, saying so without a respawn warning, and never printed the token', async () => {
    const pids = readyLines().map((l) => Number(l.pid));
    const respawning = () =>
      manager.logLines().filter((l) => l.msg === 'shard process exited; respawning').length;
    const before = respawning();
    manager.child.kill('SIGTERM');
    expect(await manager.exited).toBe(0);
    for (const pid of pids) expect(() => process.kill(pid, 0)).toThrow();
    expect(respawning()).toBe(before);
    const stopped = manager.logLines().filter((l) => l.msg === 'shard process stopped');
    expect(stopped.map((l) => l.process).sort()).toEqual([0, 1]);
    expect(stopped.every((l) => l.level === 30)).toBe(true);
    const { stdout, stderr } = manager.output();
    expect(stdout).not.toContain(TOKEN);
    expect(stderr).not.toContain(TOKEN);
  }, 30_000);
});

describe('SHARD_RESTARTS_PER_HOUR', () => {
  let limitedDiscord: FakeDiscord;
  let limitedUpstream: FakeWeb3Bio;
  let limited: NodeProcess;
  let limitedDir: string;
  let readyz = '';

  beforeAll(async () => {
    limitedDir = await mkdtemp(join(tmpdir(), 'e2e-shard-restarts-'));
    limitedDiscord = await startFakeDiscord({ token: TOKEN, heartbeatIntervalMs: 500 });
    limitedUpstream = await startFakeWeb3Bio();
    const opsPort = await freePort();
    readyz = `http://127.0.0.1:${opsPort}/readyz`;
    limited = runNode(
      MAIN,
      {
        DISCORD_TOKEN: TOKEN,
        DISCORD_APPLICATION_ID: limitedDiscord.applicationId,
        DISCORD_API_URL: limitedDiscord.apiUrl,
        WEB3BIO_API_URL: limitedUpstream.url,
        DATA_DIR: join(limitedDir, 'data'),
        HTTP_HOST: '127.0.0.1',
        HTTP_PORT: String(await freePort()),
        SHARD_COUNT: '1',
        SHARD_SPAWN_DELAY_SECONDS: '0',
        SHARD_RESTARTS_PER_HOUR: '1',
        METRICS_PORT: String(opsPort),
        LOG_LEVEL: 'info',
      },
      limitedDir,
    );
    await allShardsReady(limited);
  }, 90_000);

  afterAll(() =>
    tearDownShardedRun({
      manager: limited,
      discord: limitedDiscord,
      upstream: limitedUpstream,
      workDir: limitedDir,
    }),
  );

  const shardPids = () =>
    limited
      .logLines()
      .filter((l) => l.msg === 'bot ready')
      .map((l) => Number(l.pid));

  it('respawns a shard process that dies up to the limit, then says it no longer does', async () => {
    expect(limited.logLines().find((l) => l.msg === 'starting shards')).toMatchObject({
      shards: 1,
      restartsPerHour: 1,
    });
    expect((await fetch(readyz)).status).toBe(200);
    const [first = 0] = shardPids();
    process.kill(first, 'SIGKILL');
    const respawned = await limited.waitForLog(
      (l) => l.msg === 'bot ready' && Number(l.pid) !== first,
      60_000,
    );
    expect(
      limited.logLines().filter((l) => l.msg === 'shard process exited; respawning' && l.level === 40),
    ).toHaveLength(1);

    process.kill(Number(respawned.pid), 'SIGKILL');
    const given = await limited.waitForLog((l) => l.msg === 'shard process exited; restart limit reached');
    expect(given).toMatchObject({ level: 50, process: 0, restartsPerHour: 1 });
    expect(limited.logLines().filter((l) => l.msg === 'shard process exited; respawning')).toHaveLength(1);
    // The manager stays up (its health says a shard is missing) rather than respawning past the limit.
    expect(limited.child.exitCode).toBeNull();
    expect(shardPids()).toHaveLength(2);
    expect((await fetch(readyz)).status).toBe(503);
  }, 120_000);
});
