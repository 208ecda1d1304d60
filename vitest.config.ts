import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // The JSON report lets CI print a plain "N passed, N failed" closing line.
    reporters: ['default', ['json', { outputFile: '.cache/vitest-report.json' }]],
    projects: [
      {
        extends: true,
        test: {
          name: 'sources',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, 'test/shipped/**'],
        },
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
