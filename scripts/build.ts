/**
 * `npm run build` (and before every `npm start`): the bot as plain JavaScript in `dist/`, bundled by
 * esbuild from `src/app/run.ts`. One file per part a process loads (a web replica never loads the
 * gateway side's chunks) instead of some 800 modules, whitespace and syntax minified, names kept, so a
 * stack trace still names its functions; source maps beside them (`NODE_OPTIONS=--enable-source-maps`
 * maps traces to src/). A web replica started from `dist/` uses about 15 MiB less memory than from the
 * sources, and needs neither Node's TypeScript transformer nor its compile cache. Every other entry point
 * (tests, CLI, deploy-commands, healthcheck) runs the TypeScript sources directly.
 */
import { cp, rm } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
export const DIST = `${root}dist`;

/** The message catalogs, read at run time beside the module that reads them (src/i18n/index.ts). */
const LOCALES = `${root}src/i18n/locales`;

/** Build into `outdir` (default `dist/`), replacing what is there. */
export async function buildDist(outdir = DIST): Promise<void> {
  await rm(outdir, { recursive: true, force: true });
  await cp(LOCALES, `${outdir}/locales`, { recursive: true });
  await build({
    absWorkingDir: root,
    // run.ts, not main.js: Node's compile cache would keep about 4 MiB of cached code in memory and gain
    // a plain-JavaScript bundle little start-up time.
    entryPoints: { main: 'src/app/run.ts' },
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node24',
    minifyWhitespace: true,
    minifySyntax: true,
    sourcemap: 'linked',
    logLevel: 'warning',
    // Licences in a file beside each chunk, and ASCII only: one non-ASCII character would make V8 hold
    // the whole chunk's text at two bytes a character.
    legalComments: 'linked',
    charset: 'ascii',
    // CommonJS dependencies call require() for Node's built-ins; an ES module has none of its own.
    banner: {
      js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);",
    },
  });
}

if (import.meta.main) await buildDist();
