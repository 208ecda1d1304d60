/**
 * What `npm start` runs: the bundle scripts/build.ts makes, started with npm start's own command (its V8
 * flags included) as a web replica (INTERACTIONS=http), answering the stand-in Discord's signed
 * deliveries. The rest of the suite runs the TypeScript sources; this checks the bundle behaves the same:
 * a /whois, a member's language read from the catalogs shipped beside it, and a forged delivery refused.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeDiscord, startFakeDiscord } from '../../fakes/discord/server.ts';
import { type FakeWeb3Bio, startFakeWeb3Bio } from '../../fakes/web3bio/server.ts';
import { buildDist } from '../../scripts/build.ts';
import { ALICE, fakesEnv, toCommandOptions, visibleMessage } from './harness.ts';
import { freePort, type NodeProcess, runNode } from './processes.ts';

const PACKAGE = fileURLToPath(new URL('../../package.json', import.meta.url));

/** npm start's command: `node <flags> dist/main.js` (package.json), its flags and its entry. */
function npmStart(): { flags: string[]; entry: string } {
  const start = (JSON.parse(readFileSync(PACKAGE, 'utf8')) as { scripts: { start: string } }).scripts.start;
  const [node, ...args] = start.split(/\s+/);
  expect(node).toBe('node');
  return { flags: args.filter((a) => a.startsWith('-')), entry: args.find((a) => !a.startsWith('-')) ?? '' };
}

describe('npm start: the bundle in dist/, as a web replica', () => {
  let discord: FakeDiscord;
  let upstream: FakeWeb3Bio;
  let workDir: string;
  let bot: NodeProcess;
  let endpoint: string;

  beforeAll(async () => {
    workDir = await mkdtemp(join(tmpdir(), 'e2e-bundle-'));
    const { flags, entry } = npmStart();
    expect(entry).toBe('dist/main.js');
    await buildDist(join(workDir, 'dist'));
    discord = await startFakeDiscord();
    upstream = await startFakeWeb3Bio();
    const guild = discord.addGuild({ name: 'Bundle Guild' });
    discord.addMember(guild.id, { id: ALICE, username: 'alice' });
    const port = await freePort();
    bot = runNode(
      join(workDir, entry),
      {
        ...fakesEnv(discord, upstream, workDir),
        INTERACTIONS: 'http',
        PUBLIC_URL: 'https://bot.example.test',
        HTTP_HOST: '127.0.0.1',
        HTTP_PORT: String(port),
        LOG_LEVEL: 'info',
      },
      workDir,
      flags,
    );
    await bot.waitForLog((line) => line.msg === 'web replica ready', 30_000);
    endpoint = `http://127.0.0.1:${port}/interactions`;
    discord.useInteractionsEndpoint(endpoint);
  }, 60_000);

  afterAll(async () => {
    bot?.child.kill('SIGTERM');
    await bot?.exited;
    await Promise.all([discord?.close(), upstream?.close()]);
    await rm(workDir, { recursive: true, force: true });
  });

  it('answers a signed /whois in the response body', async () => {
    const result = await discord.runCommand({
      name: 'whois',
      userId: ALICE,
      options: toCommandOptions({ identity: 'vitalik.eth' }),
    });
    expect(visibleMessage(result).embeds[0]?.author?.name).toContain('vitalik.eth');
    await bot.waitForLog((line) => line.msg === 'interaction answered');
  });

  it('answers a German member in German, from the catalogs beside the bundle', async () => {
    const ask = (locale: string) =>
      discord.runCommand({
        name: 'whois',
        userId: ALICE,
        locale,
        options: toCommandOptions({ identity: 'nobody-here-at-all.eth' }),
      });
    const english = JSON.stringify(visibleMessage(await ask('en-US')));
    const german = JSON.stringify(visibleMessage(await ask('de')));
    expect(german).not.toBe(english);
    expect(german).toContain('Nichts gefunden');
  });

  it('refuses a forged delivery with 401', async () => {
    const payload = discord.buildCommandInteraction({
      name: 'whois',
      userId: ALICE,
      options: toCommandOptions({ identity: 'vitalik.eth' }),
    });
    const answer = await discord.deliverInteraction({ payload, tamper: 'forged', url: endpoint });
    expect(answer.status).toBe(401);
  });

  it('keeps the bot token out of its logs, a refused delivery and its answers included', async () => {
    // The child's lines arrive through a pipe: wait for the refusal's before reading everything.
    await bot.waitForLog((line) => line.msg === 'interaction delivery refused');
    const { stdout, stderr } = bot.output();
    for (const text of [stdout, stderr]) {
      expect(text).not.toContain(discord.token);
      expect(text).not.toContain(JSON.stringify(discord.token).slice(1, -1));
    }
  });
});
