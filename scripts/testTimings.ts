/**
 * `npm run test:timings [report.json] [count]`: where a test run's time went, from the JSON report every
 * `vitest run` writes (`.cache/vitest-report.json`): the slowest files (their own start to end, in the
 * worker) and the slowest tests, as Markdown tables, with the run's wall clock and the sum over files.
 * Per-file and per-test durations move much less with the machine's load than the wall clock does.
 */
import { readFile } from 'node:fs/promises';
import { relative } from 'node:path';

interface Report {
  startTime: number;
  numTotalTests: number;
  testResults: {
    name: string;
    startTime: number;
    endTime: number;
    assertionResults: { fullName: string; duration?: number | null }[];
  }[];
}

const [path = '.cache/vitest-report.json', countArg = '10'] = process.argv.slice(2);
const count = Number(countArg);
const report = JSON.parse(await readFile(path, 'utf8')) as Report;
const seconds = (ms: number) => (ms / 1_000).toFixed(1);
const files = report.testResults
  .map((f) => ({
    file: relative(process.cwd(), f.name),
    ms: f.endTime - f.startTime,
    tests: f.assertionResults,
  }))
  .sort((a, b) => b.ms - a.ms);
const tests = files
  .flatMap((f) => f.tests.map((t) => ({ file: f.file, name: t.fullName, ms: t.duration ?? 0 })))
  .sort((a, b) => b.ms - a.ms);
const end = Math.max(...report.testResults.map((f) => f.endTime));
const total = files.reduce((sum, f) => sum + f.ms, 0);

console.log(
  `${files.length} files, ${report.numTotalTests} tests; wall ${seconds(end - report.startTime)} s, ` +
    `sum over files ${seconds(total)} s\n`,
);
console.log('| File | Tests | s |\n|---|---:|---:|');
for (const f of files.slice(0, count)) console.log(`| ${f.file} | ${f.tests.length} | ${seconds(f.ms)} |`);
console.log('\n| Test | File | s |\n|---|---|---:|');
for (const t of tests.slice(0, count))
  console.log(`| ${t.name.slice(0, 90)} | ${t.file} | ${seconds(t.ms)} |`);
