/**
 * The README and docs/ keep working: every relative link and image points at a file that exists (and at a
 * heading it has), every slash command they name exists with the subcommands and options written, every
 * `npm run` script and `node` script exists, every web path they name is a route of the web app, and
 * every setting they name is one the bot or the compose file reads.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { APIApplicationCommandOption } from 'discord-api-types/v10';
import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import { describe, expect, it } from 'vitest';
import { commandsFor } from '../commands/index.ts';
import { ConfigSchema } from '../src/app/config.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function markdownFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return markdownFiles(path);
    return entry.name.endsWith('.md') ? [path] : [];
  });
}

const DOCS = ['README.md', 'src/i18n/README.md', ...markdownFiles('docs')].filter((f) =>
  existsSync(join(ROOT, f)),
);
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
/** Text outside fenced code blocks (links inside them are examples). */
const prose = (text: string) => text.replace(/^```[\s\S]*?^```/gm, '');

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const [, heading] of prose(markdown).matchAll(/^#{1,6} (.+)$/gm)) {
    const base = (heading ?? '')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\- _]/gu, '')
      .replace(/ /g, '-');
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    anchors.add(n === 0 ? base : `${base}-${n}`);
  }
  return anchors;
}

/** `[text](target)` and `![alt](target)` targets that are not web addresses. */
function localLinks(markdown: string): string[] {
  return [...prose(markdown).matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1] ?? '')
    .filter((target) => !/^[a-z]+:/i.test(target));
}

/** Code spans and fenced blocks: where commands, scripts and settings are written. */
function codeOf(markdown: string): string[] {
  const fenced = [...markdown.matchAll(/^```[^\n]*\n([\s\S]*?)^```/gm)].map((m) => m[1] ?? '');
  const spans = [...prose(markdown).matchAll(/`([^`\n]+)`/g)].map((m) => m[1] ?? '');
  return [...fenced, ...spans];
}

describe('docs links', () => {
  it('covers the README and a page for each audience', () => {
    for (const audience of ['owners', 'operators', 'contributors']) {
      expect(
        DOCS.some((f) => f.startsWith(`docs/${audience}/`)),
        audience,
      ).toBe(true);
    }
  });

  it('keeps the README to a screen or two', () => {
    expect(read('README.md').split('\n').length).toBeLessThan(150);
  });

  it.each(DOCS)('%s: every relative link and image resolves, anchors included', (file) => {
    const broken: string[] = [];
    const markdown = read(file);
    for (const target of localLinks(markdown)) {
      const [path = '', anchor] = target.split('#');
      const targetFile = path === '' ? file : relative(ROOT, resolve(ROOT, dirname(file), decodeURI(path)));
      if (!existsSync(join(ROOT, targetFile))) {
        broken.push(`${target}: no file ${targetFile}`);
        continue;
      }
      if (anchor !== undefined && !anchorsOf(read(targetFile)).has(anchor)) {
        broken.push(`${target}: no heading #${anchor} in ${targetFile}`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('the link checker itself finds a missing file and a missing heading', () => {
    expect(anchorsOf('# Role gating\n## Who may do what?\n## Who may do what?\n')).toEqual(
      new Set(['role-gating', 'who-may-do-what', 'who-may-do-what-1']),
    );
    expect(localLinks('[a](docs/x.md#y) [b](https://x.org) ![c](../shot.png)\n```\n[d](e)\n```')).toEqual([
      'docs/x.md#y',
      '../shot.png',
    ]);
  });
});

type Options = readonly APIApplicationCommandOption[] | undefined;

/** The option list a written command line ends in, or an error: `/gating rule add kind:` → add's options. */
function resolveCommand(words: string[], options: Options, path: string): Options | string {
  const [word, ...rest] = words;
  if (word === undefined || word.includes(':') || word.startsWith('[') || word === '…') return options;
  const sub = options?.find(
    (o) =>
      o.name === word &&
      (o.type === ApplicationCommandOptionType.Subcommand ||
        o.type === ApplicationCommandOptionType.SubcommandGroup),
  );
  if (!sub) {
    const hasSubcommands = options?.some((o) => o.type === ApplicationCommandOptionType.Subcommand);
    return hasSubcommands ? `${path}: no subcommand "${word}"` : options;
  }
  return resolveCommand(rest, 'options' in sub ? sub.options : undefined, `${path} ${word}`);
}

const commands = commandsFor({ GATING_ENABLED: true, LINKED_ROLES_ENABLED: true });
/** The bot's and the stand-ins' sources: where a web path or a setting is read. */
const sources = ['src', 'fakes', 'scripts'].map(typescriptIn).join('\n');

function typescriptIn(dir: string): string {
  return readdirSync(join(ROOT, dir), { withFileTypes: true })
    .map((entry) => {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) return typescriptIn(path);
      return entry.name.endsWith('.ts') ? read(path) : '';
    })
    .join('\n');
}

/** Problems with a `/command sub option:` line as written in the docs; a `/path` must be a web route. */
function commandProblems(line: string): string[] {
  const [head = '', ...words] = line.split(/\s+/);
  const name = head.slice(1);
  const command = commands.find((c) => c.data.name === name);
  if (!command) {
    // Not a command: a path the web app serves (`/healthz`, `/dashboard/{guildId}`) or one of the services
    // it calls (Discord's `/users/@me/guilds`), as the bot and the stand-ins spell their routes.
    const firstSegment = head.split(/[/{<?]/)[1] ?? '';
    return ["'", '`', '"'].some((quote) => sources.includes(`${quote}/${firstSegment}`))
      ? []
      : [`${line}: no command or web route "${head}"`];
  }
  const options = 'options' in command.data ? command.data.options : undefined;
  const resolved = resolveCommand(words, options, head);
  if (typeof resolved === 'string') return [resolved];
  const problems: string[] = [];
  for (const [, option] of line.matchAll(/(?:^|[\s[])([a-z][a-z-]*):/g)) {
    if (!resolved?.some((o) => o.name === option)) problems.push(`${line}: no option "${option}:"`);
  }
  return problems;
}

/** `/gating rule add\\|list` as the lines it stands for: `/gating rule add`, `/gating rule list`. */
function alternatives(line: string): string[] {
  const match = /(\S*)\\\|(\S*)/.exec(line);
  if (!match) return [line];
  const [whole, first = '', rest = ''] = match;
  const before = line.slice(0, match.index);
  const after = line.slice(match.index + whole.length);
  return [...alternatives(`${before}${first}${after}`), ...alternatives(`${before}${rest}${after}`)];
}

describe('docs commands', () => {
  const code = DOCS.flatMap((file) => codeOf(read(file)).map((text) => ({ file, text })));

  it('every slash command written exists, with its subcommands and options', () => {
    const problems: string[] = [];
    let checked = 0;
    for (const { file, text } of code) {
      for (const [line] of text.matchAll(
        /(?<![\w.:/~?=@<-])\/[a-z][a-z-]*(?:[ /](?:\\\||[^\s`|,;)"])+)*/gm,
      )) {
        if (line.startsWith('/dev') || line.startsWith('/usr') || line.startsWith('/etc')) continue;
        // A table cell writes alternatives as `add\|remove\|list`: each must exist.
        for (const variant of alternatives(line)) {
          checked += 1;
          problems.push(...commandProblems(variant).map((p) => `${file}: ${p}`));
        }
      }
    }
    expect(checked).toBeGreaterThan(50);
    expect(problems).toEqual([]);
  });

  it('the command checker itself refuses what does not exist', () => {
    expect(commandProblems('/gating rule add kind:score')).toEqual([]);
    expect(commandProblems('/gating rule drop')).toEqual(['/gating rule: no subcommand "drop"']);
    expect(commandProblems('/whois colour:')).toEqual(['/whois colour:: no option "colour:"']);
    expect(commandProblems('/whoisnt')).toHaveLength(1);
    expect(commandProblems('/healthz')).toEqual([]);
  });

  it('every npm script and node script written exists', () => {
    const scripts = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts;
    const problems: string[] = [];
    for (const { file, text } of code) {
      for (const [, script] of text.matchAll(/\bnpm run ([\w:-]+)/g)) {
        if (!script || !(script in scripts)) problems.push(`${file}: npm run ${script}`);
      }
      for (const [, path] of text.matchAll(/\bnode ((?:scripts|src|bench|fakes)\/[\w./-]+)/g)) {
        if (!path || !existsSync(join(ROOT, path))) problems.push(`${file}: node ${path}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('every setting written is one the bot or the compose file reads', () => {
    const problems = code.flatMap(({ file, text }) => unknownSettings(text).map((s) => `${file}: ${s}`));
    expect(problems).toEqual([]);
    expect(unknownSettings('REDIS_URL=redis://x GATING_ENABLED REDIS_ULR=1 <APP_ID>')).toEqual(['REDIS_ULR']);
  });
});

const knownSettings = new Set(Object.keys(ConfigSchema.shape));
// Beside the config: the compose file and image, the stand-ins' own settings, names the sources use.
const settingsElsewhere = `${read('compose.yaml')}${read('Dockerfile')}${sources} NODE_OPTIONS`;

/** Names written like settings (`REDIS_URL`) that neither the config nor anything else reads. */
function unknownSettings(text: string): string[] {
  return [...text.matchAll(/(?<![<\w])[A-Z][A-Z0-9]+(?:_[A-Z0-9]+)+\b/g)]
    .map(([setting]) => setting)
    .filter((setting) => !knownSettings.has(setting) && !settingsElsewhere.includes(setting));
}
