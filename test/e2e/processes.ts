/** The bot as an operator runs it: `node <script>` as a child process, its JSON log lines readable. */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import type { LogLine } from './harness.ts';

export interface NodeProcess {
  readonly child: ChildProcess;
  /** Everything written so far. */
  output(): { stdout: string; stderr: string };
  /** stdout lines parsed as JSON (a line that is not JSON fails the test when read). */
  logLines(): LogLine[];
  /** The first stdout log line matching, past or future; rejects after `timeoutMs`. */
  waitForLog(predicate: (line: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
  /** Resolves with the exit code once the process has exited. */
  readonly exited: Promise<number | null>;
}

/**
 * Runs `node [nodeArgs] <script> [args]` with exactly `env` (plus PATH), from an empty directory so no
 * `.env` is read.
 */
export function runNode(
  script: string,
  env: Record<string, string>,
  cwd: string,
  nodeArgs: readonly string[] = [],
  args: readonly string[] = [],
  /** `ipc`: an IPC channel to the child, as a shard manager forks its shard processes. */
  options: { ipc?: boolean } = {},
): NodeProcess {
  const child = spawn(process.execPath, [...nodeArgs, script, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: options.ipc ? ['ignore', 'pipe', 'pipe', 'ipc'] : ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const lines: string[] = [];
  const waiters = new Set<(line: LogLine) => void>();
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  if (child.stdout) {
    createInterface({ input: child.stdout }).on('line', (line) => {
      stdout += `${line}\n`;
      lines.push(line);
      const parsed = tryParse(line);
      if (parsed) for (const waiter of waiters) waiter(parsed);
    });
  }
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  return {
    child,
    output: () => ({ stdout, stderr }),
    logLines: () => lines.map((line) => JSON.parse(line) as LogLine),
    waitForLog(predicate, timeoutMs = 10_000) {
      const seen = lines.map(tryParse).find((line) => line !== null && predicate(line));
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(
            new Error(`no matching log line within ${timeoutMs} ms; stdout:\n${stdout}\nstderr:\n${stderr}`),
          );
        }, timeoutMs);
        const waiter = (line: LogLine) => {
          if (!predicate(line)) return;
          clearTimeout(timer);
          waiters.delete(waiter);
          resolve(line);
        };
        waiters.add(waiter);
      });
    },
    exited,
  };
}

function tryParse(line: string): LogLine | null {
  try {
    return JSON.parse(line) as LogLine;
  } catch {
    return null;
  }
}

/**
 * The keys a JSON object text carries more than once at its top level (JSON.parse keeps the last and
 * hides the rest; pino writes a child logger's bindings and a line's own fields side by side).
 */
export function repeatedTopLevelKeys(json: string): string[] {
  const seen = new Set<string>();
  const repeated: string[] = [];
  let depth = 0;
  for (let i = 0; i < json.length; i += 1) {
    const c = json[i];
    if (c === '"') {
      let end = i + 1;
      while (end < json.length && json[end] !== '"') end += json[end] === '\\' ? 2 : 1;
      const text = json.slice(i, end + 1);
      i = end;
      let next = end + 1;
      while (json[next] === ' ') next += 1;
      if (depth !== 1 || json[next] !== ':') continue;
      const key = JSON.parse(text) as string;
      if (seen.has(key)) repeated.push(key);
      seen.add(key);
    } else if (c === '{' || c === '[') depth += 1;
    else if (c === '}' || c === ']') depth -= 1;
  }
  return repeated;
}

export { freePort } from '../../fakes/namedPort.ts';
