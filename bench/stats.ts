/**
 * Statistics and table printing shared by the benchmarks: percentiles of samples, medians across rounds,
 * and markdown tables (so a run pastes straight into a closing note) with a PASS/MISS column.
 */
import { cpus, platform } from 'node:os';

export interface Summary {
  n: number;
  min: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

export type Cell = string | number;

export interface BenchTable {
  /** What is measured, e.g. "Cache hit: getProfiles('vitalik.eth') on a warm cache (issue #2)". */
  suite: string;
  /** How: rounds, iterations per round, and that the figures are medians of rounds. */
  method: string;
  /** Every target the table checks, as text; empty when it checks none. */
  targets: readonly string[];
  columns: readonly string[];
  rows: readonly (readonly Cell[])[];
  /** Lines printed under the table (causes of a MISS, caveats). */
  notes?: readonly string[];
}

export type Verdict = 'PASS' | 'MISS';

/** Nearest-rank percentile (`p` in 0..100) of ascending `sorted`; NaN when empty. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const clamped = Math.min(100, Math.max(0, p));
  const rank = Math.ceil((clamped / 100) * sorted.length);
  return sorted[Math.max(0, rank - 1)] ?? Number.NaN;
}

/** Median of `values` (mean of the middle two for an even count); NaN when empty. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const upper = sorted[mid] ?? Number.NaN;
  return sorted.length % 2 === 1 ? upper : ((sorted[mid - 1] ?? Number.NaN) + upper) / 2;
}

/** Count, extremes, mean and percentiles of one round's samples. */
export function summarize(samples: readonly number[]): Summary {
  const sorted = Float64Array.from(samples).sort();
  const list = Array.from(sorted);
  let sum = 0;
  for (const value of list) sum += value;
  return {
    n: list.length,
    min: list[0] ?? Number.NaN,
    p50: percentile(list, 50),
    p90: percentile(list, 90),
    p99: percentile(list, 99),
    max: list.at(-1) ?? Number.NaN,
    mean: list.length === 0 ? Number.NaN : sum / list.length,
  };
}

/** Field-by-field median of per-round summaries (`n` is the total sample count). */
export function medianOfRounds(rounds: readonly Summary[]): Summary {
  const field = (key: Exclude<keyof Summary, 'n'>) => median(rounds.map((round) => round[key]));
  return {
    n: rounds.reduce((total, round) => total + round.n, 0),
    min: field('min'),
    p50: field('p50'),
    p90: field('p90'),
    p99: field('p99'),
    max: field('max'),
    mean: field('mean'),
  };
}

/** PASS when `ok`, else MISS. */
export function verdict(ok: boolean): Verdict {
  return ok ? 'PASS' : 'MISS';
}

/**
 * A number for a table: thousands separated, and fewer decimals the larger it is (`digits` forces a
 * count). NaN and infinities print as `n/a`.
 */
export function formatNumber(value: number, digits?: number): string {
  if (!Number.isFinite(value)) return 'n/a';
  const abs = Math.abs(value);
  const decimals = digits ?? (abs >= 100 || Number.isInteger(value) ? 0 : abs >= 10 ? 1 : 2);
  return value.toLocaleString('en-US', { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
}

/** `a / b` printed as `1.23×`. */
export function formatRatio(a: number, b: number): string {
  return b > 0 && Number.isFinite(a) ? `${formatNumber(a / b, 2)}×` : 'n/a';
}

/** Bytes as KiB or MiB with one decimal. */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return 'n/a';
  if (Math.abs(bytes) >= 1024 * 1024) return `${formatNumber(bytes / (1024 * 1024), 1)} MiB`;
  if (Math.abs(bytes) >= 1024) return `${formatNumber(bytes / 1024, 1)} KiB`;
  return `${formatNumber(bytes, 0)} B`;
}

/** The machine a table was measured on: cores, CPU model, Node version, OS. */
export function machineLine(): string {
  const cores = cpus();
  const model = cores[0]?.model.replace(/\s+/g, ' ').trim();
  return `${cores.length} cores${model ? ` (${model})` : ''}, Node ${process.version}, ${platform()}/${process.arch}`;
}

/** A table cell safe inside a markdown table row. */
function cellText(cell: Cell): string {
  const text = typeof cell === 'number' ? formatNumber(cell) : cell;
  return text.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}

/** Right-align a column whose cells all read as numbers. */
function isNumericColumn(rows: readonly (readonly Cell[])[], index: number): boolean {
  return (
    rows.length > 0 &&
    rows.every((row) => {
      const cell = row[index];
      return (
        typeof cell === 'number' || (typeof cell === 'string' && /^[-+]?[\d,.]+\s*[a-zµ×%/]*$/i.test(cell))
      );
    })
  );
}

/** The table as markdown: a heading naming the suite, one line with machine, method and targets, the rows. */
export function renderTable(table: BenchTable, machine: string = machineLine()): string {
  const targets = table.targets.length > 0 ? table.targets.join('; ') : 'none';
  const header = `| ${table.columns.map(cellText).join(' | ')} |`;
  const rule = `| ${table.columns.map((_, i) => (isNumericColumn(table.rows, i) ? '---:' : '---')).join(' | ')} |`;
  const body = table.rows.map(
    (row) => `| ${table.columns.map((_, i) => cellText(row[i] ?? '')).join(' | ')} |`,
  );
  const notes = (table.notes ?? []).map((note) => `- ${note}`);
  return [
    `### ${table.suite}`,
    '',
    `Machine: ${machine}. Method: ${table.method}. Targets: ${targets}.`,
    '',
    header,
    rule,
    ...body,
    ...(notes.length > 0 ? ['', ...notes] : []),
    '',
  ].join('\n');
}

/**
 * A table from plain records (e.g. another suite's rows): columns are the union of their keys in
 * first-seen order; objects print as JSON.
 */
export function tableFromRecords(
  suite: string,
  method: string,
  targets: readonly string[],
  records: readonly Record<string, unknown>[],
): BenchTable {
  const columns: string[] = [];
  for (const record of records)
    for (const key of Object.keys(record)) if (!columns.includes(key)) columns.push(key);
  const rows = records.map((record) => columns.map((key) => toCell(record[key])));
  return { suite, method, targets, columns, rows };
}

function toCell(value: unknown): Cell {
  if (typeof value === 'number' || typeof value === 'string') return value;
  if (value === undefined || value === null) return '';
  if (typeof value === 'boolean' || typeof value === 'bigint') return String(value);
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return String(value);
  }
}

/** `items` rotated left by `by` places (wrapping), to vary the order of cases from one iteration to the next. */
export function rotate<T>(items: readonly T[], by: number): T[] {
  if (items.length === 0) return [];
  const shift = ((by % items.length) + items.length) % items.length;
  return [...items.slice(shift), ...items.slice(0, shift)];
}
