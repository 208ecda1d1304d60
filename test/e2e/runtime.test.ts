/**
 * The bot as an operator runs it: `node src/app/main.js` and `node src/app/deploy.ts` as child processes,
 * configured only through the environment, against the stand-in Discord and Web3.bio.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commandsFor } from '../../commands/index.ts';
import { type FakeDiscord, type FakeGuild, startFakeDiscord } from '../../fakes/discord/server.ts';
import { type FakeWeb3Bio, startFakeWeb3Bio } from '../../fakes/web3bio/server.ts';
import { ROLE_CONNECTION_METADATA } from '../../src/gating/linkedRoles/linkedRoles.ts';
import { ALICE, callbackTypes, toCommandOptions, visibleMessage } from './harness.ts';
import { type NodeProcess, runNode } from './processes.ts';

const MAIN = fileURLToPath(new URL('../../src/app/main.js', import.meta.url));
const DEPLOY = fileURLToPath(new URL('../../src/app/deploy.ts', import.meta.url));
/** Recognisable secrets: neither may ever show up in the bot's output. */
const TOKEN = 'e2e-DISCORD-TOKEN-must-not-leak-7f3a9c';
const API_KEY = 'e2e-WEB3BIO-KEY-must-not-leak-41d2b8';

/** Resolves once the stand-in Web3.bio has seen a request whose path contains `part`. */
async function upstreamRequestFor(upstream: FakeWeb3Bio, part: string, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!upstream.requests.some((r) => r.path.includes(part))) {
    if (Date.now() > deadline) throw new Error(`no upstream request for ${part} within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

let workDir: string;
beforeAll(async () => {
  workDir = await mkdtemp(join(tmpdir(), 'e2e-runtime-'));
});
afterAll(() => rm(workDir, { recursive: true, force: true }));

describe('npm start (node src/app/main.js)', () => {
  let discord: FakeDiscord;
  let upstream: FakeWeb3Bio;
  let bot: NodeProcess;

  beforeAll(async () => {
    discord = await startFakeDiscord({ token: TOKEN });
    upstream = await startFakeWeb3Bio({ apiKeys: { [API_KEY]: 'full' } });
    discord.addGuild({ name: 'Runtime Guild' });
    const guild = [...discord.state.guilds.values()][0];
    if (guild) discord.addMember(guild.id, { id: ALICE, username: 'alice' });
    bot = runNode(
      MAIN,
      {
        DISCORD_TOKEN: TOKEN,
        DISCORD_APPLICATION_ID: discord.applicationId,
        DISCORD_API_URL: discord.apiUrl,
        WEB3BIO_API_URL: upstream.url,
        WEB3BIO_API_KEY: API_KEY,
        DATA_DIR: join(workDir, 'data'),
        LOG_LEVEL: 'debug',
      },
      workDir,
    );
    await bot.waitForLog((line) => line.msg === 'bot ready');
  });
  afterAll(async () => {
    if (bot.child.exitCode === null) bot.child.kill('SIGKILL');
    await Promise.all([discord.close(), upstream.close()]);
  });

  it('logs JSON lines and answers a command', async () => {
    const result = await discord.runCommand({
      name: 'whois',
      userId: ALICE,
      options: toCommandOptions({ identity: 'vitalik.eth' }),
    });
    expect(callbackTypes(result)).toEqual([4]);
    expect(visibleMessage(result).embeds[0]?.author?.name).toBe('ENS · vitalik.eth');
    await bot.waitForLog((line) => line.interactionId === result.interactionId);
    const lines = bot.logLines();
    expect(lines.length).toBeGreaterThanOrEqual(2);
    for (const line of lines) {
      expect(line).toMatchObject({ app: 'web3bio-discord-bot' });
      expect(typeof line.level).toBe('number');
      expect(typeof line.time).toBe('number');
    }
    expect(lines.find((l) => l.msg === 'bot ready')).toMatchObject({
      level: 30,
      commands: commandsFor({ GATING_ENABLED: false }).length,
    });
    expect(upstream.requests.at(-1)?.headers['x-api-key']).toBe(`Bearer ${API_KEY}`);
  });

  it('on SIGTERM finishes the interaction in flight, then exits 0', async () => {
    upstream.setLatency(1_000);
    const pending = discord.runCommand({
      name: 'whois',
      userId: ALICE,
      options: toCommandOptions({ identity: 'dwr.eth', platform: 'farcaster' }),
    });
    await upstreamRequestFor(upstream, '/profile/farcaster/dwr.eth');
    bot.child.kill('SIGTERM');
    const result = await pending;
    expect(visibleMessage(result).embeds[0]?.author?.name).toBe('Farcaster · dwr.eth');
    expect(await bot.exited).toBe(0);

    const messages = bot.logLines().map((l) => l.msg);
    const answered = bot
      .logLines()
      .findIndex((l) => l.interactionId === result.interactionId && l.msg === 'interaction answered');
    expect(messages.indexOf('shutting down')).toBeGreaterThanOrEqual(0);
    expect(answered).toBeGreaterThan(messages.indexOf('shutting down'));
    expect(messages.indexOf('stopped')).toBeGreaterThan(answered);
  });

  it('never printed the Discord token or the Web3.bio API key', () => {
    const { stdout, stderr } = bot.output();
    expect(stdout.length).toBeGreaterThan(0);
    for (const secret of [TOKEN, API_KEY]) {
      expect(stdout).not.toContain(secret);
      expect(stderr).not.toContain(secret);
    }
  });
});

describe('start-up configuration errors', () => {
  it('lists a missing DISCORD_TOKEN and a bad WEB3BIO_API_URL in one error pointing at .env.example', async () => {
    const bot = runNode(
      MAIN,
      { DISCORD_APPLICATION_ID: '123456789012345678', WEB3BIO_API_URL: 'ftp://not-http.example' },
      workDir,
    );
    const code = await bot.exited;
    const { stdout, stderr } = bot.output();
    expect(code).not.toBe(0);
    expect(code).not.toBeNull();
    expect(stdout).toBe('');
    const block = stderr.trim().split('\n');
    expect(block[0]).toContain('.env.example');
    expect(block.filter((line) => /^\s+- DISCORD_TOKEN /.test(line))).toHaveLength(1);
    expect(block.filter((line) => /^\s+- WEB3BIO_API_URL /.test(line))).toHaveLength(1);
    expect(stderr).not.toContain('not-http.example');
    expect(stderr).not.toMatch(/\n\s+at /);
  });
});

describe('npm run deploy-commands (node src/app/deploy.ts)', () => {
  let discord: FakeDiscord;
  let guild: FakeGuild;
  const expected = commandsFor({ GATING_ENABLED: false })
    .map((command) => command.data.name)
    .sort((a, b) => a.localeCompare(b));

  beforeAll(async () => {
    discord = await startFakeDiscord({ token: TOKEN });
    guild = discord.addGuild({ name: 'Dev Guild' });
  });
  afterAll(() => discord.close());

  async function deploy(extra: Record<string, string> = {}): Promise<string> {
    const run = runNode(
      DEPLOY,
      {
        DISCORD_TOKEN: TOKEN,
        DISCORD_APPLICATION_ID: discord.applicationId,
        DISCORD_API_URL: discord.apiUrl,
        ...extra,
      },
      workDir,
    );
    const code = await run.exited;
    const { stdout, stderr } = run.output();
    expect(code, stderr).toBe(0);
    expect(`${stdout}${stderr}`).not.toContain(TOKEN);
    return stdout;
  }

  const snapshot = (list: { id: string; name: string; options?: unknown }[]) =>
    list.map(({ id, name, options }) => ({ id, name, options })).sort((a, b) => a.name.localeCompare(b.name));

  it('registers the registry in DEV_GUILD_ID with REST alone; running it twice leaves the same set', async () => {
    const first = await deploy({ DEV_GUILD_ID: guild.id });
    expect(first).toContain(`Registered ${expected.length} commands guild ${guild.id}`);
    const registered = snapshot(discord.state.commands.guilds.get(guild.id) ?? []);
    expect(registered.map((c) => c.name)).toEqual(expected);
    expect(discord.state.commands.global).toEqual([]);

    await deploy({ DEV_GUILD_ID: guild.id });
    expect(snapshot(discord.state.commands.guilds.get(guild.id) ?? [])).toEqual(registered);
    const routes = discord.requests.map((r) => `${r.method} ${r.path}`);
    expect(routes).toEqual([
      `PUT /applications/${discord.applicationId}/guilds/${guild.id}/commands`,
      `PUT /applications/${discord.applicationId}/guilds/${guild.id}/commands`,
    ]);
  });

  it('sends the guild route only what it accepts: no contexts or integration_types on guild commands', async () => {
    const gating = { GATING_ENABLED: 'true', PUBLIC_URL: 'https://bot.example' };
    const all = commandsFor({ GATING_ENABLED: true });
    expect(all.some((c) => 'contexts' in c.data)).toBe(true);
    const out = await deploy({ ...gating, DEV_GUILD_ID: guild.id });
    expect(out).toContain(`Registered ${all.length} commands guild ${guild.id}`);
    const registered = discord.state.commands.guilds.get(guild.id) ?? [];
    expect(registered.map((c) => c.name).sort()).toEqual(all.map((c) => c.data.name).sort());
    for (const command of registered) expect(command.contexts ?? null, command.name).toBeNull();
    expect(registered.find((c) => c.name === 'gating')?.default_member_permissions).toBe('268435456');

    await deploy(gating);
    const global = discord.state.commands.global.find((c) => c.name === 'gating');
    expect(global?.contexts).toEqual([0]);
  });

  it('with LINKED_ROLES_ENABLED also registers the role-connection metadata (at most 5), idempotently', async () => {
    const linked = {
      LINKED_ROLES_ENABLED: 'true',
      GATING_ENABLED: 'true',
      DISCORD_CLIENT_SECRET: 'test-client-secret',
      TOKEN_ENCRYPTION_KEY: 'cd'.repeat(32),
      PUBLIC_URL: 'https://bot.example',
    };
    expect(discord.oauth.roleConnectionMetadata).toEqual([]);
    const before = discord.requests.length;
    const out = await deploy({ ...linked, DEV_GUILD_ID: guild.id });
    expect(out).toContain('Registered 5 Linked Roles metadata records: likely_human, humanity_score');
    expect(out).not.toContain(linked.TOKEN_ENCRYPTION_KEY);
    expect(discord.oauth.roleConnectionMetadata).toEqual(ROLE_CONNECTION_METADATA);
    // What a server's admin reads in role settings, in their own language.
    expect(discord.oauth.roleConnectionMetadata[0]).toMatchObject({
      name: 'Likely human',
      name_localizations: { de: 'Wahrscheinlich ein Mensch', ja: '人間の可能性が高い' },
      description_localizations: {
        fr: 'Une identité web3 prouvée porte un justificatif de personne réelle',
      },
    });
    await deploy({ ...linked, DEV_GUILD_ID: guild.id });
    expect(discord.oauth.roleConnectionMetadata).toEqual(ROLE_CONNECTION_METADATA);
    const routes = discord.requests.slice(before).map((r) => `${r.method} ${r.path}`);
    expect(routes.filter((r) => r.includes('role-connections'))).toEqual([
      `PUT /applications/${discord.applicationId}/role-connections/metadata`,
      `PUT /applications/${discord.applicationId}/role-connections/metadata`,
    ]);
    // Without the switch the metadata route is never called.
    await deploy({ DEV_GUILD_ID: guild.id });
    expect(discord.requests.slice(before).filter((r) => r.path.includes('role-connections'))).toHaveLength(2);
  });

  it('registers globally without DEV_GUILD_ID, idempotently', async () => {
    const first = await deploy();
    expect(first).toContain(`Registered ${expected.length} commands globally`);
    const registered = snapshot(discord.state.commands.global);
    expect(registered.map((c) => c.name)).toEqual(expected);
    const whois = registered.find((c) => c.name === 'whois');
    const whoisOptions = (whois?.options ?? []) as { name: string }[];
    expect(whoisOptions.map((o) => o.name)).toEqual(['identity', 'platform', 'private']);

    await deploy();
    expect(snapshot(discord.state.commands.global)).toEqual(registered);
    expect(discord.requests.some((r) => r.path === '/gateway/bot')).toBe(false);
  });
});
