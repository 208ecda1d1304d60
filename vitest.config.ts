import { configDefaults, defineConfig } from 'vitest/config';
import { SlowestFirst } from './test/slowestFirst.ts';

/** What `npm run test:quick` leaves out: the real bot against the stand-ins, and the production install. */
const QUICK_SKIPS = ['test/e2e/**', 'test/docker.test.ts'];
/**
 * Files that need a process of their own: `test/fakes/discord.test.ts` uploads files through discord.js's
 * REST, whose undici 6 takes the global dispatcher of whichever undici loaded first in the process; after
 * another file loaded the bot's undici 8, that one refuses Node's FormData (UND_ERR_INVALID_ARG). The bot
 * itself never uploads through discord.js's REST (src/discord/webhookRest.ts says why).
 */
const OWN_PROCESS = ['test/fakes/discord.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Vitest's default is one worker fewer than the cores: one worker on a 2-core machine, so the whole
    // suite ran file after file. Most of a file's time here is waiting (the stand-ins, PostgreSQL and
    // Redis, the bot's own timers, child processes), not CPU, so two files run at once on 2 cores. Three
    // are faster still (docs/contributors/tests.md) but not yet proven to pass every time:
    // `npm test -- --maxWorkers=3` runs them; `--maxWorkers=1` runs one at a time.
    maxWorkers: 2,
    sequence: { sequencer: SlowestFirst },
    // The JSON report lets CI print a plain "N passed, N failed" closing line.
    reporters: ['default', ['json', { outputFile: '.cache/vitest-report.json' }]],
    projects: [
      {
        extends: true,
        test: {
          name: 'sources',
          include: ['test/**/*.test.ts'],
          // One worker process runs file after file, its imports kept: a fresh process per file spent
          // 13-17% of the run importing the same modules again (docs/contributors/tests.md). A file
          // closes what it starts (bots, stand-ins, stubs), as it must beside the others anyway.
          isolate: false,
          // `npm run test:quick` (TEST_QUICK=1) leaves out the end-to-end files too: the edit loop.
          exclude: [
            ...configDefaults.exclude,
            'test/shipped/**',
            ...OWN_PROCESS,
            ...(process.env.TEST_QUICK ? QUICK_SKIPS : []),
          ],
        },
      },
      {
        // The same, each file in a fresh process (OWN_PROCESS).
        extends: true,
        test: { name: 'sources-own-process', include: OWN_PROCESS },
      },
      {
        // What `npm start` runs: the bundle, built once per run (test/shipped/globalSetup.ts).
        extends: true,
        test: {
          name: 'shipped',
          include: ['test/shipped/**/*.test.ts'],
          globalSetup: ['test/shipped/globalSetup.ts'],
        },
      },
    ],
  },
});
