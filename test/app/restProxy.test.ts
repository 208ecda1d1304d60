/**
 * The REST proxy's own answers, from the sources (test/shipped/restProxy.test.ts runs the bundle between
 * callers and a rate-limiting stand-in): its health, paths outside /api, and a DISCORD_API_URL that
 * points back at itself.
 */
import { Writable } from 'node:stream';
import { REST } from '@discordjs/rest';
import { Routes } from 'discord-api-types/v10';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeDiscord, roleEditBucket, startFakeDiscord } from '../../fakes/discord/server.ts';
import { type RestProxy, startRestProxy } from '../../src/app/restProxy.ts';
import { createLogger } from '../../src/ops/log.ts';

let discord: FakeDiscord | undefined;
let proxies: RestProxy[] = [];

afterEach(async () => {
  await Promise.all(proxies.map((proxy) => proxy.stop()));
  proxies = [];
  await discord?.close();
});

function logger(lines: string[]) {
  const destination = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk));
      done();
    },
  });
  return createLogger({ level: 'info', secrets: [], destination });
}

async function start(apiUrl: string, lines: string[], port = 0): Promise<RestProxy> {
  const proxy = await startRestProxy(
    {
      DISCORD_TOKEN: 'proxy-test-token',
      DISCORD_API_URL: apiUrl,
      REST_PROXY_HOST: '127.0.0.1',
      REST_PROXY_PORT: port,
      LOG_LEVEL: 'info',
      DATA_DIR: './data',
    },
    logger(lines),
  );
  proxies.push(proxy);
  return proxy;
}

describe('the REST proxy (PROCESS_ROLE=rest-proxy)', () => {
  it('answers /healthz with its counts and 404 outside /api, asking Discord neither', async () => {
    discord = await startFakeDiscord({ token: 'proxy-test-token' });
    const lines: string[] = [];
    const proxy = await start(discord.apiUrl, lines);
    expect(lines.join('')).toContain('"msg":"rest proxy ready"');

    const health = await fetch(`${proxy.url}/healthz`);
    expect(await health.json()).toEqual({
      ok: true,
      forwarded: 0,
      refusedTokens: 0,
      discord429s: 0,
      abandoned: 0,
    });
    expect((await fetch(`${proxy.url}/v10/users/@me`)).status).toBe(404);
    const me = await fetch(`${proxy.url}/api/v10/users/@me`, {
      headers: { authorization: 'Bot proxy-test-token' },
    });
    expect(me.status).toBe(200);
    expect(discord.requests.map((request) => request.path)).toEqual(['/users/@me']);
    expect(proxy.counts.forwarded).toBe(1);
  });

  it('refuses a request that comes back to it (DISCORD_API_URL pointing at itself) instead of looping', async () => {
    const lines: string[] = [];
    const first = await start('http://127.0.0.1:9/api', lines);
    const port = Number(new URL(first.url).port);
    await first.stop();
    proxies = [];
    const looped = await start(`http://127.0.0.1:${port}/api`, lines, port);
    const answer = await fetch(`${looped.url}/api/v10/users/@me`, {
      headers: { authorization: 'Bot proxy-test-token' },
    });
    expect(answer.status).toBe(508);
    expect(lines.join('')).toContain('DISCORD_API_URL points back at it');
    expect(lines.join('')).not.toContain('proxy-test-token');
  });

  it('drops a request whose caller gave up while it waited, instead of sending a copy the caller will resend', async () => {
    discord = await startFakeDiscord({ token: 'proxy-test-token' });
    const guild = discord.addGuild({ name: 'Queued' });
    const role = discord.addRole(guild.id, { name: 'Verified', position: 1 });
    for (const id of ['200000000000000001', '200000000000000002'])
      discord.addMember(guild.id, { id, username: `member-${id.slice(-1)}` });
    discord.enforceRateLimits({ routes: [roleEditBucket(1, 3_000)] });
    const proxy = await start(discord.apiUrl, []);
    // A caller whose REST gives up after 800 ms and does not retry: the second edit waits 3 s in the proxy.
    const caller = new REST({ api: `${proxy.url}/api`, timeout: 800, retries: 0 }).setToken(
      'proxy-test-token',
    );
    const edit = (userId: string) => caller.put(Routes.guildMemberRole(guild.id, userId, role.id));
    const [first, second] = await Promise.allSettled([
      edit('200000000000000001'),
      edit('200000000000000002'),
    ]);
    expect(first.status).toBe('fulfilled');
    expect(second).toMatchObject({ status: 'rejected', reason: { name: 'AbortError' } });
    await new Promise((resolve) => setTimeout(resolve, 3_500));
    expect(discord.requests.map((request) => request.path.split('/')[4])).toEqual(['200000000000000001']);
    expect(proxy.counts).toMatchObject({ forwarded: 2, abandoned: 1 });
  });

  it('answers 502 when Discord cannot be reached, never an empty 200', async () => {
    const lines: string[] = [];
    const proxy = await start('http://127.0.0.1:9/api', lines);
    const answer = await fetch(`${proxy.url}/api/v10/users/@me`, {
      headers: { authorization: 'Bot proxy-test-token' },
    });
    expect(answer.status).toBe(502);
    expect(await answer.json()).toEqual({ message: '502: Discord unreachable', code: 0 });
    expect(lines.join('')).toContain('rest proxy could not reach Discord');
    expect(lines.join('')).not.toContain('proxy-test-token');
  }, 30_000);

  it('keeps 50 bot requests in any 1.25 s, and lets requests without a bot token (interaction answers) pass at once', async () => {
    discord = await startFakeDiscord({ token: 'proxy-test-token' });
    const proxy = await start(discord.apiUrl, []);
    const bot = { headers: { authorization: 'Bot proxy-test-token' } };
    const started = Date.now();
    await Promise.all(Array.from({ length: 50 }, () => fetch(`${proxy.url}/api/v10/users/@me`, bot)));
    const fiftyFirst = fetch(`${proxy.url}/api/v10/users/@me`, bot).then(() => Date.now() - started);
    // An interaction's answer (no token: its own in the path), while the 51st bot request waits.
    const answer = fetch(`${proxy.url}/api/v10/interactions/1/not-a-token/callback`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 1 }),
    }).then((reply) => ({ status: reply.status, ms: Date.now() - started }));
    const { status, ms } = await answer;
    expect(status).toBeGreaterThanOrEqual(400);
    expect(await fiftyFirst).toBeGreaterThanOrEqual(1_200);
    expect(ms).toBeLessThan(1_000);
  }, 30_000);
});
