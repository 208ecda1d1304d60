/**
 * The dashboard with SHARD_COUNT: the shard manager serves the pages and has no gateway state; each
 * guild's requests (health, a rule's dry run) cross through the store to the shard process that serves
 * it, nudged over IPC. `node src/app/main.js` as an operator runs it, two shards of one guild each, on
 * PostgreSQL, against the stand-in Discord.
 */
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { FakeDiscord, FakeGuild } from '../../fakes/discord/server.ts';
import { startFakeDiscord } from '../../fakes/discord/server.ts';
import { snowflakeOnShard } from '../../fakes/discord/snowflake.ts';
import { type FakeWeb3Bio, startFakeWeb3Bio } from '../../fakes/web3bio/server.ts';
import { openPostgresStore } from '../../src/store/index.ts';
import { dropPostgresSchema, POSTGRES_URL } from '../store/harness.ts';
import { CLIENT_SECRET, csrfOf, ENCRYPTION_KEY, signIn, textOf } from './dashboardHarness.ts';
import { ALICE, humanRoleSettings } from './harness.ts';
import { freePort, type NodeProcess } from './processes.ts';
import { allShardsReady, runShardManager, schemaDatabaseUrl, tearDownShardedRun } from './shardManager.ts';

const SCHEMA = `dashboard_shards_${process.pid}`;
const OWNER = '310000000000000001';

let discord: FakeDiscord;
let upstream: FakeWeb3Bio;
let manager: NodeProcess;
let workDir: string;
let publicUrl: string;
const guilds: FakeGuild[] = [];
const ruleRoles: string[] = [];

beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'e2e-dashboard-shards-'));
  await dropPostgresSchema(SCHEMA);
  discord = await startFakeDiscord({ clientSecret: CLIENT_SECRET, heartbeatIntervalMs: 500 });
  upstream = await startFakeWeb3Bio();
  discord.addUser({ id: OWNER, username: 'owner' });
  const store = await openPostgresStore(POSTGRES_URL, { schema: SCHEMA });
  for (const shard of [0, 1]) {
    const guild = discord.addGuild({
      id: snowflakeOnShard(shard, 2),
      name: `Shard ${shard} guild`,
      ownerId: OWNER,
    });
    discord.addMember(guild.id, { id: ALICE, username: 'alice' });
    const human = discord.addRole(guild.id, { name: 'Human', position: 1 });
    ruleRoles.push(discord.addRole(guild.id, { name: `Rule role ${shard}`, position: 2 }).id);
    await store.saveGuildSettings(humanRoleSettings(guild.id, human.id));
    guilds.push(guild);
  }
  await store.close();
  const httpPort = await freePort();
  publicUrl = `http://127.0.0.1:${httpPort}`;
  discord.oauth.allowRedirect(`${publicUrl}/dashboard/callback`);
  manager = runShardManager({ discord, upstream }, workDir, {
    DATABASE_URL: schemaDatabaseUrl(SCHEMA),
    GATING_ENABLED: 'true',
    DASHBOARD_ENABLED: 'true',
    DISCORD_CLIENT_SECRET: CLIENT_SECRET,
    TOKEN_ENCRYPTION_KEY: ENCRYPTION_KEY,
    PUBLIC_URL: publicUrl,
    HTTP_PORT: String(httpPort),
    SHARD_COUNT: '2',
  });
  await allShardsReady(manager);
}, 90_000);

afterAll(() => tearDownShardedRun({ manager, discord, upstream, schema: SCHEMA, workDir }));

describe('the dashboard with two shard processes', () => {
  it('the manager lists both shards’ servers, and each server’s requests run in the process of its shard', async () => {
    const d = { g: { h: { discord } }, publicUrl } as Parameters<typeof signIn>[0];
    // The shard processes write their servers' snapshots once ready.
    const deadline = Date.now() + 20_000;
    let browser = await signIn(d, OWNER);
    while (!guilds.every((g) => browser.page.text.includes(g.name)) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      browser = await signIn(d, OWNER);
    }
    for (const guild of guilds) expect(textOf(browser.page.text)).toContain(guild.name);

    for (const [shard, guild] of guilds.entries()) {
      const health = await browser.get(`/dashboard/${guild.id}/health`);
      expect(textOf(health.text), `shard ${shard}`).toContain('No problem found');
      const rules = await browser.get(`/dashboard/${guild.id}/rules`);
      const preview = await browser.post(`/dashboard/${guild.id}/rules/preview`, {
        csrf: csrfOf(rules.text),
        role: ruleRoles[shard] ?? '',
        kind: 'score',
        value: '10',
      });
      expect(textOf(preview.text), `shard ${shard}`).toContain('Dry run: nothing is stored yet');
    }
    // Each request was answered by the shard process that serves its guild, none by the manager: the
    // viewer's standing (asked before the first page, then kept for the rights' age) too. A shard logs
    // its answer after storing it, so the last line may reach the manager's pipe after the page.
    await vi.waitFor(
      () => {
        const answered = manager.logLines().filter((l) => l.msg === 'dashboard request answered');
        for (const [shard, guild] of guilds.entries()) {
          const ops = answered.filter((l) => l.guildId === guild.id);
          expect(ops.map((l) => l.op).sort(), `shard ${shard}`).toEqual([
            'rulePreview',
            'standing',
            'status',
          ]);
          expect(
            ops.every((l) => JSON.stringify(l.shards) === JSON.stringify([shard])),
            `shard ${shard}`,
          ).toBe(true);
        }
      },
      { timeout: 5_000, interval: 100 },
    );
  });

  it('the shard processes stop by themselves when the manager is killed outright (SIGKILL)', async () => {
    const pids = manager
      .logLines()
      .filter((l) => l.msg === 'bot ready')
      .map((l) => Number(l.pid));
    expect(pids).toHaveLength(2);
    const alive = () => pids.filter((pid) => isAlive(pid));
    expect(alive()).toEqual(pids);
    const started = Date.now();
    manager.child.kill('SIGKILL');
    await manager.exited;
    await expect.poll(alive, { timeout: 45_000, interval: 250 }).toEqual([]);
    console.info(`shard processes gone ${Date.now() - started} ms after the manager was killed`);
  }, 60_000);
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
