/**
 * `npm run bench [-- --only client,cache,interaction,shared-quota,gating,guild-scale,web,export,http,dashboard,holdings,footprint,rest-proxy,capacity] [--quick]
 * [--skip-gating]`: runs every benchmark suite against the stand-ins on 127.0.0.1 and prints each table
 * as markdown.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { runCacheBench } from './cache.ts';
import { runCapacityBench } from './capacity.ts';
import { runClientBench } from './client.ts';
import { runDashboardBench } from './dashboard.ts';
import { runFootprintBench } from './footprint.ts';
import { runExportBench } from './gatingExport.ts';
import { runGuildScaleBench } from './guildScale.ts';
import { runHoldingsBench } from './holdings.ts';
import { runHttpBench } from './http.ts';
import { runInteractionBench } from './interaction.ts';
import { runRestProxyBench } from './restProxy.ts';
import { runSharedQuotaBench } from './sharedQuota.ts';
import { type BenchTable, machineLine, renderTable, tableFromRecords } from './stats.ts';
import { runWebBench } from './web.ts';

export const SUITES = [
  'client',
  'cache',
  'interaction',
  'shared-quota',
  'gating',
  'guild-scale',
  'web',
  'export',
  'http',
  'dashboard',
  'holdings',
  'footprint',
  'rest-proxy',
  'capacity',
] as const;
export type SuiteName = (typeof SUITES)[number];

export interface RunArgs {
  suites: SuiteName[];
  quick: boolean;
  help: boolean;
}

export const USAGE = `usage: npm run bench -- [--only ${SUITES.join('|')}[,...]] [--quick] [--skip-gating]
  --only         run only these suites (repeatable or comma-separated)
  --quick        a short smoke run: one round, fewer iterations
  --skip-gating  leave out the gating suite (bench/gating.ts)`;

/** Parse the runner's flags; throws an Error whose message is fit to print. */
export function parseRunArgs(argv: readonly string[]): RunArgs {
  const only: SuiteName[] = [];
  let quick = false;
  let skipGating = false;
  let help = false;
  for (let index = 0; index < argv.length; index++) {
    const flag = argv[index] ?? '';
    const [name, inline] = flag.startsWith('--only=')
      ? ['--only', flag.slice('--only='.length)]
      : [flag, undefined];
    if (name === '--quick') quick = true;
    else if (name === '--skip-gating' || name === '--no-gating') skipGating = true;
    else if (name === '--help' || name === '-h') help = true;
    else if (name === '--only') {
      const value = inline ?? argv[++index];
      if (value === undefined || value === '') throw new Error(`--only needs a suite name\n${USAGE}`);
      for (const part of value.split(',')) {
        const suite = part.trim();
        if (!(SUITES as readonly string[]).includes(suite)) {
          throw new Error(`unknown suite "${suite}"\n${USAGE}`);
        }
        if (!only.includes(suite as SuiteName)) only.push(suite as SuiteName);
      }
    } else throw new Error(`unknown option ${flag}\n${USAGE}`);
  }
  const chosen = only.length > 0 ? only : [...SUITES];
  return { suites: skipGating ? chosen.filter((s) => s !== 'gating') : chosen, quick, help };
}

const GATING_FILE = fileURLToPath(new URL('./gating.ts', import.meta.url));

interface GatingModule {
  runGatingBench?: (opts: object) => Promise<unknown>;
  /** The suite's own table for its rows, when it exports one. */
  gatingTable?: (rows: never, opts: object) => BenchTable;
  /** Issue #7: the upstream-incident pass, with its own table. */
  runGatingStormBench?: (opts: object) => Promise<Record<string, unknown>[]>;
  stormTable?: (rows: never, opts: object) => BenchTable;
  /** Issue #9: two processes on one PostgreSQL. */
  runSharedRecheckBench?: (opts: object) => Promise<Record<string, unknown>[]>;
  sharedRecheckTable?: (rows: never, opts: object) => BenchTable;
}

/** The gating suite (another file, issue #4) when it exists: its rows as one table. */
async function runGating(quick: boolean, progress: (line: string) => void): Promise<BenchTable[] | string> {
  if (!existsSync(GATING_FILE)) return 'bench/gating.ts does not exist yet: gating suite skipped.';
  const module = (await import(GATING_FILE)) as GatingModule;
  if (typeof module.runGatingBench !== 'function') {
    return 'bench/gating.ts has no runGatingBench: gating suite skipped.';
  }
  const options = { quick, progress };
  const result = await module.runGatingBench(options);
  if (typeof result === 'string') return result;
  const records = (Array.isArray(result) ? result : [result]).filter(
    (r): r is Record<string, unknown> => typeof r === 'object' && r !== null,
  );
  const storm =
    typeof module.runGatingStormBench === 'function' && typeof module.stormTable === 'function'
      ? [module.stormTable((await module.runGatingStormBench(options)) as never, options)]
      : [];
  const shared =
    typeof module.runSharedRecheckBench === 'function' && typeof module.sharedRecheckTable === 'function'
      ? [module.sharedRecheckTable((await module.runSharedRecheckBench(options)) as never, options)]
      : [];
  if (typeof module.gatingTable === 'function') {
    return [module.gatingTable(records as never, options), ...storm, ...shared];
  }
  return [
    tableFromRecords(
      'Gating re-check under upstream and Discord rate limits (issue #4, bench/gating.ts)',
      quick ? 'runGatingBench quick run' : 'runGatingBench defaults',
      ['no avoidable 429s', 'role edits only where needed', 'wall ≤ 1.2× floor'],
      records,
    ),
  ];
}

async function runSuite(suite: SuiteName, quick: boolean, progress: (line: string) => void) {
  switch (suite) {
    case 'client':
      return runClientBench({ quick, progress });
    case 'cache':
      return runCacheBench({ quick, progress });
    case 'interaction':
      return runInteractionBench({ quick, progress });
    case 'shared-quota':
      return runSharedQuotaBench({ quick, progress });
    case 'gating':
      return runGating(quick, progress);
    case 'guild-scale':
      return runGuildScaleBench({ quick, progress });
    case 'web':
      return runWebBench({ quick, progress });
    case 'export':
      return runExportBench({ quick, progress });
    case 'http':
      return runHttpBench({ quick, progress });
    case 'dashboard':
      return runDashboardBench({ quick, progress });
    case 'holdings':
      return runHoldingsBench({ quick, progress });
    case 'footprint':
      return runFootprintBench({ quick, progress });
    case 'rest-proxy':
      return runRestProxyBench({ quick, progress });
    case 'capacity':
      return runCapacityBench({ quick, progress });
  }
}

async function main(): Promise<number> {
  let args: RunArgs;
  try {
    args = parseRunArgs(process.argv.slice(2));
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    return 2;
  }
  if (args.help) {
    console.log(USAGE);
    return 0;
  }
  const progress = (line: string) => console.error(`… ${line}`);
  console.log(`## Benchmarks${args.quick ? ' (quick smoke run: figures are not meaningful)' : ''}\n`);
  console.log(`Machine: ${machineLine()}. Suites: ${args.suites.join(', ')}.\n`);
  let failed = 0;
  const verdicts: string[] = [];
  for (const suite of args.suites) {
    const started = performance.now();
    try {
      const output = await runSuite(suite, args.quick, progress);
      if (typeof output === 'string') console.log(`${output}\n`);
      else
        for (const table of output) {
          console.log(renderTable(table));
          const resultColumn = table.columns.indexOf('Result');
          for (const row of table.rows) {
            const cell = resultColumn === -1 ? undefined : row[resultColumn];
            if (cell === 'PASS' || cell === 'MISS' || cell === 'FAIL')
              verdicts.push(`${cell}  ${table.suite} · ${row[0]}`);
          }
        }
    } catch (error) {
      failed++;
      console.error(`suite ${suite} failed:`, error);
    }
    progress(`${suite} took ${((performance.now() - started) / 1_000).toFixed(1)} s`);
  }
  if (verdicts.length > 0) console.log(['### Verdicts', '', ...verdicts.map((v) => `- ${v}`), ''].join('\n'));
  return failed > 0 ? 1 : 0;
}

if (import.meta.main) process.exitCode = await main();
