/**
 * PROCESS_ROLE=rest-proxy as `npm start` runs it (the bundle in dist/), between the bot's processes and a
 * stand-in Discord that enforces a global 50 requests a second per bot token and per-route buckets (issue
 * #37): six callers (four bot processes and two web replicas: each a process of its own with a REST client
 * configured as the bot configures its own) editing roles through it make every edit once with no 429
 * answered, where the same
 * callers straight to Discord are answered 429s. A caller's own token is what reaches Discord; another
 * bot's is answered 401 by the proxy; the proxy adds no token and logs none; SIGTERM lets requests finish.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { REST } from '@discordjs/rest';
import { Routes } from 'discord-api-types/v10';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { editsMade, roleEditWorld, runRoleEditCallers } from '../../fakes/discord/roleEditCallers.ts';
import { type FakeDiscord, roleEditBucket, startFakeDiscord } from '../../fakes/discord/server.ts';
import { READY, type ShippedProcess, startShipped } from './shippedBot.ts';

const SHAPE = { guilds: 8, callers: 6, editsPerCaller: 40 };
/** Discord's global limit, and a member-role bucket of 10 a second per guild: 8 guilds could take 80. */
const LIMITS = { globalPerSecond: 50, routes: [roleEditBucket(10, 1_000)] };
const OTHER_BOT_TOKEN = 'another-bots-token.0123456789abcdef';
const HEALTHCHECK = join(import.meta.dirname, '../../src/ops/healthcheck.ts');
const run = promisify(execFile);

describe('npm start with PROCESS_ROLE=rest-proxy: one Discord REST budget for the whole bot', () => {
  let discord: FakeDiscord;
  let proxy: ShippedProcess;
  let proxyUrl: string;

  async function startProxy(
    extra: Record<string, string> = {},
  ): Promise<{ process: ShippedProcess; url: string }> {
    const started = await startShipped(
      {
        ...extra,
        PROCESS_ROLE: 'rest-proxy',
        DISCORD_TOKEN: discord.token,
        DISCORD_API_URL: discord.apiUrl,
        REST_PROXY_HOST: '127.0.0.1',
        REST_PROXY_PORT: '0',
      },
      READY.restProxy,
    );
    const ready = await started.waitForLog(READY.restProxy);
    expect(ready).toMatchObject({ host: '127.0.0.1', port: expect.any(Number) });
    return { process: started, url: `http://127.0.0.1:${String(ready.port)}` };
  }

  beforeAll(async () => {
    discord = await startFakeDiscord({ token: 'the-bots-own-token.0123456789' });
    ({ process: proxy, url: proxyUrl } = await startProxy());
  }, 60_000);

  afterAll(async () => {
    await proxy?.stop();
    await discord?.close();
  });

  it('six callers editing roles through it: no 429 answered, every edit made once; straight to Discord, 429s', async () => {
    const straight = roleEditWorld(discord, SHAPE);
    discord.enforceRateLimits(LIMITS);
    const control = await runRoleEditCallers(discord.apiUrl, discord.token, straight);
    const controlCounts = { ...discord.rateLimitCounts };
    expect(control.failed, 'edits failed straight to Discord').toBe(0);
    expect(controlCounts.global429s + controlCounts.route429s, JSON.stringify(controlCounts)).toBeGreaterThan(
      0,
    );

    const proxied = roleEditWorld(discord, SHAPE);
    discord.enforceRateLimits(LIMITS);
    const run = await runRoleEditCallers(`${proxyUrl}/api`, discord.token, proxied);
    expect(run.failed, 'edits failed through the proxy').toBe(0);
    expect(discord.rateLimitCounts, 'the 429s answered through the proxy').toEqual({
      global429s: 0,
      route429s: 0,
    });
    const made = editsMade(discord, proxied);
    expect(made).toHaveLength(SHAPE.callers * SHAPE.editsPerCaller);
    expect(
      made.filter((count) => count !== 1),
      'edits made other than once',
    ).toEqual([]);
    for (const edit of proxied.flat())
      expect(discord.state.guilds.get(edit.guildId)?.members.get(edit.userId)?.roles).toContain(edit.roleId);
    // The edits carried the callers' own token and audit-log reason through the proxy.
    const proxiedRequest = await discord.waitForRequest((r) =>
      r.path.endsWith(`/${proxied[0]?.[0]?.roleId}`),
    );
    expect(proxiedRequest.headers).toMatchObject({
      authorization: `Bot ${discord.token}`,
      'x-audit-log-reason': 'issue%2037%20role%20edit',
    });
    discord.enforceRateLimits({});
  }, 90_000);

  it('sends each caller’s own Authorization on, adds none, and answers another bot’s token itself', async () => {
    const own = await new REST({ api: `${proxyUrl}/api` }).setToken(discord.token).get(Routes.user('@me'));
    expect(own).toMatchObject({ id: discord.botUserId });

    const before = discord.requests.length;
    const other = new REST({ api: `${proxyUrl}/api` }).setToken(OTHER_BOT_TOKEN);
    await expect(other.get(Routes.user('@me'))).rejects.toMatchObject({ status: 401 });
    expect(discord.requests.slice(before).map((r) => r.headers.authorization)).not.toContain(
      `Bot ${OTHER_BOT_TOKEN}`,
    );

    // No token: Discord's own 401 comes back, and Discord saw no token (the proxy added none).
    const bare = await fetch(`${proxyUrl}/api/v10/users/@me?probe=bare`);
    expect(bare.status).toBe(401);
    const seen = await discord.waitForRequest((r) => r.query.probe === 'bare');
    expect(seen.status).toBe(401);
    expect(seen.headers.authorization).toBeUndefined();

    const health = await fetch(`${proxyUrl}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ ok: true, refusedTokens: 1, discord429s: 0 });
    const logged = JSON.stringify(proxy.output());
    expect(logged).toContain('refused a request with another bot token');
    expect(logged).not.toContain(discord.token);
    expect(logged).not.toContain(OTHER_BOT_TOKEN);
  }, 30_000);

  it('answers the requests waiting in it at SIGTERM, then exits 0', async () => {
    const edits = roleEditWorld(discord, { guilds: 1, callers: 3, editsPerCaller: 1 });
    const guildId = edits[0]?.[0]?.guildId;
    // One edit a second in the guild: two of the three wait in the proxy for the bucket when SIGTERM arrives.
    discord.enforceRateLimits({ routes: [roleEditBucket(1, 1_000)] });
    const { process: stopping, url } = await startProxy();
    const running = runRoleEditCallers(`${url}/api`, discord.token, edits);
    await discord.waitForRequest((r) => r.path.startsWith(`/guilds/${guildId}/`));
    // All three have reached the proxy (one arriving after SIGTERM would find it closed, as it should).
    for (let tries = 0; ; tries += 1) {
      const counts = (await (await fetch(`${url}/healthz`)).json()) as { forwarded: number };
      if (counts.forwarded === 3) break;
      if (tries > 200) throw new Error(`only ${counts.forwarded} of the three edits reached the proxy`);
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    stopping.child.kill('SIGTERM');
    const run = await running;
    expect(run.failed).toBe(0);
    expect(run.wallMs).toBeGreaterThan(1_900);
    expect(await stopping.exited).toBe(0);
    expect(editsMade(discord, edits)).toEqual([1, 1, 1]);
    expect(discord.rateLimitCounts.route429s).toBe(0);
    expect(stopping.logLines().map((line) => line.msg)).toEqual(
      expect.arrayContaining(['shutting down', 'stopped']),
    );
    await stopping.stop();
    discord.enforceRateLimits({});
  }, 60_000);

  it('writes the heartbeat the image’s own health check reads', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'rest-proxy-data-'));
    const { process: started } = await startProxy({ DATA_DIR: dataDir });
    const healthcheck = (dir: string) =>
      run(process.execPath, [HEALTHCHECK], { env: { PATH: process.env.PATH ?? '', DATA_DIR: dir } }).then(
        () => 0,
        (error: { code: number }) => error.code,
      );
    try {
      expect(await healthcheck(dataDir)).toBe(0);
      expect(await healthcheck(join(dataDir, 'elsewhere'))).toBe(1);
    } finally {
      await started.stop();
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 60_000);

  it('refuses to start without DISCORD_TOKEN, and says so', async () => {
    const failed = startShipped(
      { PROCESS_ROLE: 'rest-proxy', REST_PROXY_PORT: '0' },
      READY.restProxy,
      30_000,
    );
    await expect(failed).rejects.toThrow(/DISCORD_TOKEN is required.*PROCESS_ROLE=rest-proxy/);
  }, 40_000);
});
