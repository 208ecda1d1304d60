import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ButtonStyle, ComponentType } from 'discord-api-types/v10';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import whois from '../../commands/whois.ts';
import { rawProfile } from '../../fakes/web3bio/builders.ts';
import { type FakeWeb3Bio, startFakeWeb3Bio } from '../../fakes/web3bio/server.ts';
import { loadConfig } from '../../src/app/config.ts';
import { createWeb3BioFromConfig } from '../../src/app/wiring.ts';
import {
  checkOptions,
  PREVIEW_EXIT,
  parsePreviewArgs,
  runPreview,
  UsageError,
} from '../../src/cli/preview.ts';
import {
  componentsScript,
  fieldColumns,
  messageToHtml,
  type PreviewMessage,
  type PreviewPageOptions,
  placeholderImage,
} from '../../src/cli/previewHtml.ts';
import {
  formatDiscordTime,
  formatMessageTime,
  markdownToHtml,
  markdownToText,
  parseMarkdown,
} from '../../src/cli/previewMarkdown.ts';
import { type CommandContext, coerceOptions } from '../../src/discord/command.ts';
import { createLogger } from '../../src/ops/log.ts';
import { renderError } from '../../src/render/errors.ts';
import type { Web3BioClient } from '../../src/web3bio/client.ts';
import { runCli } from './runCli.ts';

const API_KEY = 'preview-test-key-0123456789';
const SCRIPT_NAME = 'scripted.eth';
/** Secrets with a `"`: in printed JSON or HTML they appear escaped, where a scrub of the text would miss them. */
const QUOTED_KEY = 'quoted"key0123456789';
const DB_PASSWORD = 'pg"pass0123';
const LEAKY_NAME = 'leaky.eth';
const SCRIPT_TEXT = '<script>alert(1)</script><img src=x onerror=alert(1)>';

let fake: FakeWeb3Bio;
let client: Web3BioClient;
let work: string;

beforeAll(async () => {
  fake = await startFakeWeb3Bio({ apiKeys: { [API_KEY]: 'full', [QUOTED_KEY]: 'full' } });
  fake.world.addProfile(
    rawProfile('ens', LEAKY_NAME, `0x${'1e'.padStart(40, '0')}`, {
      description: `the key is ${QUOTED_KEY}`,
      location: `db ${DB_PASSWORD}`,
    }),
  );
  fake.world.addProfile(
    rawProfile('ens', SCRIPT_NAME, `0x${'5c'.padStart(40, '0')}`, {
      displayName: SCRIPT_TEXT,
      avatar: 'https://avatars.example.com/scripted.png',
      description: `${SCRIPT_TEXT} [x](javascript:alert(1))`,
    }),
  );
  const config = loadConfig({
    DISCORD_TOKEN: '-',
    DISCORD_APPLICATION_ID: '00000000000000000',
    WEB3BIO_API_URL: fake.url,
    WEB3BIO_RATE_LIMIT: 'off',
  });
  client = createWeb3BioFromConfig(config, createLogger({ level: 'silent', secrets: [] }));
  work = await mkdtemp(join(tmpdir(), 'preview-test-'));
});

afterAll(async () => {
  await client.close();
  await fake.close();
  await rm(work, { recursive: true, force: true });
});

/** Run the preview as a user would, in a child process, and return its exit code and output. */
function preview(args: string[], env: Record<string, string> = {}) {
  return runCli('src/cli/preview.ts', fake.url, args, env);
}

function directContext(): CommandContext {
  const config = loadConfig({ DISCORD_TOKEN: '-', DISCORD_APPLICATION_ID: '00000000000000000' });
  return {
    deps: { config, logger: createLogger({ level: 'silent', secrets: [] }), web3bio: client },
    render: { locale: 'en-US', nowSec: Math.floor(Date.now() / 1_000), ipfsGateway: config.IPFS_GATEWAY },
    userId: '1',
    guildId: null,
  };
}

describe('npm run preview', () => {
  it('prints exactly what /whois answers when called directly, as one line of JSON with --json', async () => {
    const { code, stdout } = await preview(['whois', 'identity=vitalik.eth', '--json']);
    expect(code).toBe(PREVIEW_EXIT.ok);
    expect(stdout.trim().split('\n')).toHaveLength(1);
    const direct = await whois.answer(coerceOptions(whois, { identity: 'vitalik.eth' }), directContext());
    expect(JSON.parse(stdout)).toEqual(direct);
    expect(direct.embeds[0]?.title).toBe('vitalik.eth');
  });

  it('pretty-prints the same JSON by default and marks private answers ephemeral', async () => {
    const { code, stdout } = await preview(['/whois', 'identity=vitalik.eth', 'private=true']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^\{\n {2}"embeds": \[/);
    const message = JSON.parse(stdout) as PreviewMessage;
    expect(message.flags).toBe(64);
    const direct = await whois.answer(coerceOptions(whois, { identity: 'vitalik.eth' }), directContext());
    expect(message).toEqual({ ...direct, flags: 64 });
  });

  it('shows the reply in the --locale given: German fields, a Japanese error', async () => {
    const german = await preview(['whois', 'identity=vitalik.eth', '--locale', 'de', '--json']);
    expect(german.code).toBe(PREVIEW_EXIT.ok);
    const message = JSON.parse(german.stdout) as PreviewMessage;
    expect(message.embeds[0]?.fields?.map((f) => f.name)).toEqual(
      expect.arrayContaining(['Adresse', 'Follower', 'Folgt']),
    );
    expect(message.embeds[0]?.footer?.text).toBe('Web3.bio · Profil 1 von 3');
    const japanese = await preview(['whois', 'identity=../../x', '--locale', 'ja', '--json']);
    expect((JSON.parse(japanese.stdout) as PreviewMessage).embeds[0]?.title).toBe(
      '❓ Web3 アイデンティティではありません',
    );
    expect((await preview(['--help'])).stdout).toContain('--locale L');
  });

  it('answers an invalid identity with the private error message, exit 0, and the kind on stderr', async () => {
    const { code, stdout, stderr } = await preview(['whois', 'identity=../../x', '--json']);
    expect(code).toBe(PREVIEW_EXIT.ok);
    const ctx = directContext();
    const error = await whois.answer({ identity: '../../x' }, ctx).then(
      () => null,
      (e: unknown) => e,
    );
    expect(JSON.parse(stdout)).toEqual({ ...renderError(error, ctx.render), flags: 64 });
    expect(stderr).toContain('invalid_identity:');
  });

  it('refuses an unknown option with a clear message and exit 2', async () => {
    const result = await preview(['whois', 'identity=vitalik.eth', 'colour=red']);
    expect(result.code).toBe(PREVIEW_EXIT.usage);
    expect(result.stderr).toContain('/whois has no option "colour" (options: identity, platform, private)');
    expect(result.stderr).toContain('Usage: npm run preview');
    expect(result.stdout).toBe('');
  });

  it.each([
    { args: ['whoami-not-here', 'identity=x'], message: 'unknown command "whoami-not-here"' },
    { args: ['whois'], message: '/whois needs identity=' },
    { args: ['whois', 'identity=x', 'platform=myspace'], message: 'platform must be one of: ens,' },
    { args: ['whois', 'identity=x', 'private=maybe'], message: 'private must be true or false' },
    { args: ['whois', 'vitalik.eth'], message: 'expected name=value, got "vitalik.eth"' },
    { args: ['whois', 'identity=x', '--colour'], message: "Unknown option '--colour'" },
  ])('refuses $args before any request, with exit 2', async ({ args, message }) => {
    const out: string[] = [];
    const err: string[] = [];
    const before = fake.requests.length;
    const code = await runPreview(
      args,
      { WEB3BIO_API_URL: fake.url },
      {
        out: (t) => out.push(t),
        err: (t) => err.push(t),
      },
    );
    expect(code).toBe(PREVIEW_EXIT.usage);
    expect(err.join('\n')).toContain(message);
    expect(out).toEqual([]);
    expect(fake.requests.length).toBe(before);
  });

  it('never prints the API key, even when Web3.bio refuses it', async () => {
    const wrong = 'wrong-key-abcdef123456';
    const bad = await preview(['whois', 'identity=vitalik.eth'], { WEB3BIO_API_KEY: wrong });
    expect(bad.code).toBe(0);
    expect(JSON.parse(bad.stdout)).toMatchObject({ flags: 64, embeds: [{ title: '🔒 API key refused' }] });
    const good = await preview(['whois', 'identity=vitalik.eth'], { WEB3BIO_API_KEY: API_KEY });
    expect(JSON.parse(good.stdout)).not.toHaveProperty('flags');
    expect(`${bad.stdout}${bad.stderr}${good.stdout}${good.stderr}`).not.toMatch(/key-(abcdef|0123)/);
  });

  it('scrubs every configured secret from what it prints and writes, in any escaping', async () => {
    const file = join(work, 'leaky.html');
    const out: string[] = [];
    const err: string[] = [];
    const env = {
      WEB3BIO_API_URL: fake.url,
      WEB3BIO_RATE_LIMIT: 'off',
      WEB3BIO_API_KEY: QUOTED_KEY,
      DATABASE_URL: `postgres://bot:${encodeURIComponent(DB_PASSWORD)}@db.internal/bot`,
    };
    const code = await runPreview(['whois', `identity=${LEAKY_NAME}`, '--html', file], env, {
      out: (t) => out.push(t),
      err: (t) => err.push(t),
    });
    expect(code).toBe(PREVIEW_EXIT.ok);
    const message = JSON.parse(out.join('\n')) as PreviewMessage;
    expect(message.embeds[0]?.description).toBe('the key is [redacted]');
    const printed = [...out, ...err, await readFile(file, 'utf8')].join('\n');
    for (const secret of [QUOTED_KEY, DB_PASSWORD]) {
      for (const form of [secret, JSON.stringify(secret).slice(1, -1), secret.replace('"', '&quot;')])
        expect(printed).not.toContain(form);
    }
    expect(fake.requests.at(-1)?.headers['x-api-key']).toBe(`Bearer ${QUOTED_KEY}`);
  });

  it('writes a page with the data escaped, the components script inline and allowed by hash', async () => {
    const file = join(work, 'scripted.html');
    const { code, stderr } = await preview([
      'whois',
      `identity=${SCRIPT_NAME}`,
      '--html',
      file,
      '--offline-images',
    ]);
    expect(code).toBe(0);
    expect(stderr).toContain(`wrote ${file}`);
    const page = await readFile(file, 'utf8');
    const script = await componentsScript();
    expect(page.includes(`<script type="module">${script}</script>`)).toBe(true);
    // Everything but the script, so a failure prints a readable page.
    const markup = page.replace(script, '');
    expect(markup.match(/<script/gi)).toHaveLength(1);
    expect(markup).not.toContain('<img src=x');
    expect(markup).toContain(
      'embed-title="&lt;script&gt;alert(1)&lt;\u200b/script&gt;&lt;img src=x onerror=alert(1)&gt;"',
    );
    expect(markup).toContain('[x](javascript:alert(1))</discord-embed-description>');
    expect(markup).not.toMatch(/="\s*javascript:/i);
    const hash = createHash('sha256').update(script).digest('base64');
    expect(markup).toContain(`script-src &#39;sha256-${hash}&#39;`);
    expect(markup).toContain('img-src data:;');
    for (const [, value] of markup.matchAll(/ (?:thumbnail|image|avatar|author-image)="([^"]*)"/g))
      expect(value).toMatch(/^data:image\/svg\+xml,/);
  });

  it('shows the seeded hostile display name as escaped text (in-process run)', async () => {
    const file = join(work, 'hostile.html');
    const env = { WEB3BIO_API_URL: fake.url, WEB3BIO_RATE_LIMIT: 'off' };
    const code = await runPreview(['whois', 'identity=hostile.eth', '--html', file], env, {
      out: () => {},
      err: () => {},
    });
    expect(code).toBe(0);
    const page = (await readFile(file, 'utf8')).replace(await componentsScript(), '');
    const title = /embed-title="([^"]*)"/.exec(page)?.[1];
    expect(title).toBe('**@\u200beveryone** &lt;\u200b@123&gt; [x](https://evil/)');
    expect(page).not.toContain('<\u200b@123>');
  });
});

describe('parsePreviewArgs and checkOptions', () => {
  it('reads name=value pairs (values may hold "=") and the flags', () => {
    expect(
      parsePreviewArgs([
        '/whois',
        'identity=a=b',
        '--html',
        'out.html',
        '--offline-images',
        '--locale',
        'de',
      ]),
    ).toEqual({
      command: 'whois',
      options: { identity: 'a=b' },
      json: false,
      html: 'out.html',
      offlineImages: true,
      locale: 'de',
      help: false,
    });
  });

  it('refuses repeated options and missing commands', () => {
    expect(() => parsePreviewArgs(['whois', 'identity=a', 'identity=b'])).toThrow(UsageError);
    expect(() => parsePreviewArgs([])).toThrow(/give a command/);
    expect(parsePreviewArgs(['--help']).help).toBe(true);
  });

  it('accepts what Discord would accept', () => {
    expect(checkOptions(whois, { identity: 'vitalik.eth', platform: 'ens', private: 'yes' })).toEqual([]);
    expect(checkOptions(whois, { identity: 'x'.repeat(257) })).toEqual([
      'identity is longer than 256 characters',
    ]);
  });
});

const TIME: { locale: string; nowSec: number; timeZone: string } = {
  locale: 'en-US',
  nowSec: 1_700_000_000,
  timeZone: 'UTC',
};

describe('Discord markdown', () => {
  it('renders bold, italics, underline, strike, code, links and times as escaped HTML', () => {
    expect(markdownToHtml('**a** *b* __c__ ~~d~~ `<e>`', TIME)).toBe(
      '<strong>a</strong> <em>b</em> <u>c</u> <s>d</s> <discord-code>&lt;e&gt;</discord-code>',
    );
    expect(markdownToHtml('[site](https://x.example/a) <https://y.example>', TIME)).toBe(
      '<discord-link href="https://x.example/a" target="_blank" rel="noopener noreferrer nofollow">site</discord-link> ' +
        '<discord-link href="https://y.example/" target="_blank" rel="noopener noreferrer nofollow">https://y.example</discord-link>',
    );
    expect(markdownToHtml('<t:1700000000:D>\nnext', TIME)).toBe(
      '<discord-time>November 14, 2023</discord-time><br>next',
    );
  });

  it('keeps escaped and unmatched markers as text', () => {
    expect(markdownToText('\\*\\*not bold\\*\\* \\[x\\]\\(y\\) 2 * 3 snake_case_name **open', TIME)).toBe(
      '**not bold** [x](y) 2 * 3 snake_case_name **open',
    );
    expect(parseMarkdown('***both***')).toEqual([
      { kind: 'bold', children: [{ kind: 'italic', children: [{ kind: 'text', text: 'both' }] }] },
    ]);
  });

  it('never links anything but http(s), and never lets text become markup', () => {
    const html = markdownToHtml('[click](javascript:alert(1)) <img src=x onerror=alert(1)> "\'&', TIME);
    expect(html).not.toContain('<img');
    expect(html).not.toContain('<discord-link');
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt; &quot;&#39;&amp;');
  });

  it('stays fast on hostile input', () => {
    const hostile = '**_~~||`['.repeat(600) + '*a _b '.repeat(600);
    const started = performance.now();
    const html = markdownToHtml(hostile, TIME, true);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(html).not.toMatch(/<(?!\/?(strong|em|u|s|discord-\w+|br)[ >])/);
  });
});

describe('times', () => {
  it('formats every Discord style in the reader’s locale', () => {
    const at = 1_700_000_000;
    expect(formatDiscordTime(at, 't', TIME)).toBe('10:13 PM');
    expect(formatDiscordTime(at, 'd', TIME)).toBe('11/14/2023');
    expect(formatDiscordTime(at, 'D', { ...TIME, locale: 'de' })).toBe('14. November 2023');
    expect(formatDiscordTime(at + 10 * 86_400, 'R', TIME)).toBe('in 10 days');
    expect(formatDiscordTime(at - 3 * 365 * 86_400, 'R', TIME)).toBe('3 years ago');
    expect(formatDiscordTime(at, 'D', { ...TIME, locale: 'not a locale!' })).toBe('November 14, 2023');
    expect(formatDiscordTime(1e15, 'f', TIME)).toBeNull();
  });

  it('labels today’s messages "Today at"', () => {
    expect(formatMessageTime(TIME.nowSec, TIME)).toBe('Today at 10:13 PM');
    expect(formatMessageTime(TIME.nowSec - 86_400, TIME)).toBe('11/13/2023 10:13 PM');
  });
});

describe('messageToHtml', () => {
  const options: PreviewPageOptions = { command: '/whois', offlineImages: true, ...TIME };
  const hostile = '<script>alert(1)</script>';
  const message: PreviewMessage = {
    content: `note ${hostile}`,
    embeds: [
      {
        title: `${hostile} 123456789012345678901`,
        url: 'javascript:alert(1)',
        description: hostile,
        color: 0x5298ff,
        author: { name: `"${hostile}`, icon_url: 'https://a.example/i.png', url: 'data:text/html,x' },
        thumbnail: { url: 'https://t.example/t.png' },
        image: { url: 'https://i.example/i.png' },
        fields: [
          { name: hostile, value: hostile, inline: true },
          { name: 'b', value: 'b', inline: true },
          { name: 'c', value: 'c', inline: false },
        ],
        footer: { text: hostile, icon_url: 'https://f.example/f.png' },
        timestamp: new Date(TIME.nowSec * 1_000).toISOString(),
      },
    ],
    components: [
      {
        type: ComponentType.ActionRow,
        components: [
          {
            type: ComponentType.StringSelect,
            custom_id: 'x',
            placeholder: hostile,
            options: [
              { label: hostile, value: '0', description: hostile },
              { label: 'chosen', value: '1', default: true },
            ],
          },
        ],
      },
      {
        type: ComponentType.ActionRow,
        components: [
          { type: ComponentType.Button, style: ButtonStyle.Link, label: hostile, url: 'javascript:alert(1)' },
          { type: ComponentType.Button, style: ButtonStyle.Danger, label: 'Stop', custom_id: 'stop' },
        ],
      },
    ],
    allowed_mentions: { parse: [] },
    flags: 64,
  };

  it('escapes every text and drops every unsafe URL', () => {
    const html = messageToHtml(message, options);
    expect(html).not.toMatch(/<script|<\/script/i);
    expect(html).not.toMatch(/javascript:|data:text/i);
    expect(html.split('&lt;script&gt;alert(1)&lt;/script&gt;').length - 1).toBe(10);
    expect(html).toContain('author-name="&quot;&lt;script&gt;');
  });

  it('shows the parts Discord shows: ephemeral note, colour, chosen option, button styles, timestamp', () => {
    const html = messageToHtml(message, options);
    expect(html).toMatch(/<discord-message [^>]*\bephemeral\b/);
    expect(html).toContain('color="#5298ff"');
    expect(html).toContain('placeholder="chosen"');
    expect(html).toContain('<discord-button type="secondary" disabled>');
    expect(html).toContain('<discord-button type="destructive">Stop</discord-button>');
    expect(html).toContain('timestamp="Today at 10:13 PM"');
    // A 17+ digit word would become a CDN emoji in titles: an invisible joiner keeps it text.
    expect(html).toContain('1234567890123456\u206078901');
    expect(messageToHtml({ ...message, flags: undefined }, options)).not.toMatch(/\bephemeral\b/);
  });

  it('uses local placeholders for images when offline, and the real https URLs otherwise', () => {
    const offline = messageToHtml(message, options);
    expect(offline).not.toMatch(/(thumbnail|image|avatar)="https?:/);
    const online = messageToHtml(message, { ...options, offlineImages: false });
    expect(online).toContain('thumbnail="https://t.example/t.png"');
    expect(online).toContain('footer-image="https://f.example/f.png"');
  });

  it('lays inline fields out three to a row, as Discord does', () => {
    const inline = { inline: true };
    expect(fieldColumns([inline, inline, {}, inline, inline, inline, inline])).toEqual([
      '1 / 7',
      '7 / 13',
      '1 / 13',
      '1 / 5',
      '5 / 9',
      '9 / 13',
      '1 / 13',
    ]);
  });

  it('draws placeholders from letters and digits only', () => {
    const url = placeholderImage('seed', '<b>"vi"</b>');
    expect(url).toMatch(/^data:image\/svg\+xml,/);
    const svg = decodeURIComponent(url.slice('data:image/svg+xml,'.length));
    expect(svg).toContain('>BV</text>');
    expect(placeholderImage('seed', 'x')).toBe(placeholderImage('seed', 'x'));
  });
});
