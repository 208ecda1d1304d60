/**
 * The order files start in: the slowest known first, so that on 2 workers the long waits overlap the
 * short files instead of running alone at the end. Vitest orders by an earlier run's timings when it has
 * them and by file size when it has not (a fresh clone, CI), which left a 20 s attack test and the
 * Farcaster flows to the last minute. `slowestFiles.json`: the seconds of each file over 9 s (its hooks
 * included) in fresh-clone runs on 2 workers (docs/contributors/tests.md; `npm run test:timings` after a
 * run). The `shipped` project's files start first; the rest (under 9 s each) keep Vitest's order.
 */
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import SECONDS from './slowestFiles.json' with { type: 'json' };

const seconds = Object.entries(SECONDS as Record<string, number>);

function knownSeconds(file: TestSpecification): number {
  return seconds.find(([path]) => file.moduleId.endsWith(`/${path}`))?.[1] ?? 0;
}

export class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const projects = [...new Set(sorted.map((f) => f.project.name))];
    const position = new Map(sorted.map((f, i) => [f, i]));
    return [...sorted].sort(
      (a, b) =>
        projects.indexOf(a.project.name) - projects.indexOf(b.project.name) ||
        knownSeconds(b) - knownSeconds(a) ||
        (position.get(a) ?? 0) - (position.get(b) ?? 0),
    );
  }
}
