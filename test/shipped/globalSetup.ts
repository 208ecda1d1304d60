/**
 * Builds the bundle once per test run, as `npm start` builds it (scripts/build.ts), for every file of
 * the shipped suite; vitest calls this only when a file of that suite is queued. The bundle goes to a
 * temporary folder outside the project: with no node_modules above it, anything the bundle would load
 * at run time from the project's dependencies fails here instead of passing unnoticed.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { buildDist } from '../../scripts/build.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The built `dist/` folder the shipped suite runs. */
    shippedDist: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = await mkdtemp(join(tmpdir(), 'shipped-'));
  const dist = join(dir, 'dist');
  await buildDist(dist);
  project.provide('shippedDist', dist);
  return () => rm(dir, { recursive: true, force: true });
}
