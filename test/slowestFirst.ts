/**
 * The order files start in: the slowest known first, so that on 2 workers the long waits overlap the
 * short files instead of running alone at the end. Vitest orders by an earlier run's timings when it has
 * them and by file size when it has not (a fresh clone, CI), which left a 20 s attack test and the
 * Farcaster flows to the last minute. Seconds from a fresh clone's run (docs/contributors/tests.md).
 */
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const SLOWEST: readonly string[] = [
  'test/e2e/recheckCycles.test.ts', // 35-90 s, mostly waiting for a 36 s re-check cycle to begin (twice)
  'test/e2e/farcaster.test.ts', // 47 s
  'test/e2e/linkedRoleFarcaster.test.ts', // 24 s
  'test/docker.test.ts', // 22 s
  'test/web/seenDeliveries.test.ts', // 22 s
  'test/e2e/stalledClient.test.ts', // 20 s
  'test/e2e/webHardening.test.ts', // 18 s
  'test/e2e/gating.test.ts', // 16 s
  'test/store/gatingStore.test.ts', // 15 s
  'test/e2e/farcaster.browser.test.ts', // 15 s
  'test/e2e/linkedRoles.browser.test.ts', // 15 s
  'test/e2e/walletRace.test.ts', // 14 s
  'test/e2e/dashboardAttacks.test.ts', // 12 s
  'test/e2e/timedOutModerators.test.ts', // 11 s
  'test/e2e/httpGating.test.ts', // 11 s
];

function rank(file: TestSpecification): number {
  const found = SLOWEST.findIndex((path) => file.moduleId.endsWith(`/${path}`));
  return found === -1 ? SLOWEST.length : found;
}

export class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const projects = [...new Set(sorted.map((f) => f.project.name))];
    const position = new Map(sorted.map((f, i) => [f, i]));
    return [...sorted].sort(
      (a, b) =>
        projects.indexOf(a.project.name) - projects.indexOf(b.project.name) ||
        rank(a) - rank(b) ||
        (position.get(a) ?? 0) - (position.get(b) ?? 0),
    );
  }
}
