/** Talking to the benchmarks' child processes over IPC, and reading what they hold. */
import type { ChildProcess } from 'node:child_process';
import { readFile } from 'node:fs/promises';

/** The child's next IPC message of this `type`; rejects when it exits first. */
export function nextMessage<T extends { type: string }>(child: ChildProcess, type: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: T) => {
      if (message.type !== type) return;
      child.off('message', onMessage);
      child.off('exit', onExit);
      resolve(message);
    };
    const onExit = (code: number | null) =>
      reject(new Error(`bench child exited (${code}) before "${type}"`));
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

/** Resident set size of a process in bytes, from `/proc/<pid>/status` (VmRSS). */
export async function rssBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kib = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status)?.[1];
  if (kib === undefined) throw new Error(`no VmRSS for process ${pid}`);
  return Number(kib) * 1024;
}
