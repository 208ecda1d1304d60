/**
 * The house stays in shape (issue #34): no source file in src/ or commands/ passes MAX_FILE_LINES lines,
 * and nothing bench/ runs reaches into test/ (the stand-ins bench/ may use live in fakes/). Functions over
 * 120 lines are Biome's to find (noExcessiveLinesPerFunction), not this file's.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, extname, join, relative, resolve, sep } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');

/** Lines a source file may have; past it, split the file by concern (docs/contributors/development.md). */
const MAX_FILE_LINES = 400;

/** Code, not data: the catalogs' JSON and the recorded sources in src/i18n are not held to the limit. */
const CODE = new Set(['.ts', '.mts', '.cts', '.js', '.mjs', '.cjs']);

/** Lines as an editor counts them: a final newline ends the last line, it does not start another. */
function lineCount(text: string): number {
  if (text === '') return 0;
  const lines = text.split('\n').length;
  return text.endsWith('\n') ? lines - 1 : lines;
}

/**
 * The files a module names to run: its static and dynamic imports and re-exports, and the scripts it
 * starts by a path next to it (`new URL('./worker.ts', import.meta.url)`), resolved from `file`. Only
 * relative names: packages are not the house's.
 */
function referencedModules(file: string, text: string): string[] {
  const names = [
    ...text.matchAll(/(?:^|[\s;}])(?:import|export)\s[^;]*?\sfrom\s*['"]([^'"]+)['"]/g),
    ...text.matchAll(/(?:^|[\s;}])import\s*['"]([^'"]+)['"]/g),
    ...text.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g),
    ...text.matchAll(
      /\bnew URL\(\s*['"]([^'"]+\.(?:ts|mts|cts|js|mjs|cjs))['"]\s*,\s*import\.meta\.url\s*\)/g,
    ),
  ].map((match) => match[1] ?? '');
  return names.filter((name) => name.startsWith('.')).map((name) => resolve(dirname(file), name));
}

/** Every file reachable from `entries` through referencedModules, each with the path that reached it. */
function reachable(entries: readonly string[], read: (file: string) => string | undefined) {
  const via = new Map<string, readonly string[]>();
  const queue: (readonly string[])[] = entries.map((entry) => [entry]);
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    const file = next.at(-1) as string;
    if (via.has(file)) continue;
    via.set(file, next);
    const text = read(file);
    if (text === undefined) continue;
    for (const target of referencedModules(file, text)) {
      if (!via.has(target)) queue.push([...next, target]);
    }
  }
  return via;
}

function filesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : filesUnder(path);
    return [path.split(sep).join('/')];
  });
}

const readModule = (file: string): string | undefined =>
  CODE.has(extname(file)) && existsSync(file) && statSync(file).isFile()
    ? readFileSync(file, 'utf8')
    : undefined;

const isUnder = (folder: string) => (file: string) => !relative(join(ROOT, folder), file).startsWith('..');

describe('file size', () => {
  const sources = [...filesUnder('src'), ...filesUnder('commands')].filter((f) => CODE.has(extname(f)));
  const lines = new Map(sources.map((f) => [f, lineCount(readFileSync(join(ROOT, f), 'utf8'))]));

  it('counts lines as an editor does', () => {
    expect([lineCount(''), lineCount('a'), lineCount('a\n'), lineCount('a\nb'), lineCount('a\n\n')]).toEqual([
      0, 1, 1, 2, 2,
    ]);
  });

  it(`keeps every source file in src/ and commands/ at ${MAX_FILE_LINES} lines or fewer`, () => {
    expect(sources.length).toBeGreaterThan(100);
    const over = [...lines].filter(([, n]) => n > MAX_FILE_LINES);
    expect(Object.fromEntries(over), 'split these by concern, each part named after its main export').toEqual(
      {},
    );
  });
});

describe('bench/ and test/', () => {
  const bench = filesUnder('bench')
    .filter((f) => CODE.has(extname(f)))
    .map((f) => join(ROOT, f));

  it('finds a test/ module that a bench file imports, re-exports, loads or starts, and nothing else', () => {
    const file = join(ROOT, 'bench/example.ts');
    const modules = (text: string) => referencedModules(file, text).map((f) => relative(ROOT, f));
    expect(modules("import { createDatabase } from '../test/e2e/postgresDatabase.ts';")).toEqual([
      'test/e2e/postgresDatabase.ts',
    ]);
    expect(
      modules("import {\n  a,\n  type B,\n} from '../test/kit.ts';\nexport * from '../test/more.ts';"),
    ).toEqual(['test/kit.ts', 'test/more.ts']);
    expect(modules("const kit = await import('../test/kit.ts');")).toEqual(['test/kit.ts']);
    expect(modules("fork(fileURLToPath(new URL('../test/e2e/worker.ts', import.meta.url)));")).toEqual([
      'test/e2e/worker.ts',
    ]);
    expect(
      modules(
        "import pg from 'pg';\nimport { createDatabase } from '../fakes/localPostgres.ts';\n// see ../test/e2e\n",
      ),
    ).toEqual(['fakes/localPostgres.ts']);
  });

  it('reaches a test/ module through a file in between, and names the path', () => {
    const files: Record<string, string> = {
      'bench/a.ts': "import { b } from '../fakes/b.ts';",
      'fakes/b.ts': "import { c } from '../test/c.ts';",
      'test/c.ts': 'export const c = 1;',
    };
    const via = reachable([join(ROOT, 'bench/a.ts')], (f) => files[relative(ROOT, f)]);
    expect(via.get(join(ROOT, 'test/c.ts'))?.map((f) => relative(ROOT, f))).toEqual([
      'bench/a.ts',
      'fakes/b.ts',
      'test/c.ts',
    ]);
  });

  it('has no bench/ file that imports or starts anything in test/, directly or through another file', () => {
    expect(bench.length).toBeGreaterThan(10);
    const via = reachable(bench, readModule);
    expect(via.has(join(ROOT, 'src/app/config.ts')), 'the walk follows imports into src/').toBe(true);
    const intoTest = [...via]
      .filter(([f]) => isUnder('test')(f))
      .map(([, path]) => path.map((f) => relative(ROOT, f)));
    expect(intoTest, 'move what bench/ needs into fakes/ (the test kit), and import it from there').toEqual(
      [],
    );
  });
});
