import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Run a CLI script as a user would, in a child process whose environment is only PATH, the stand-in
 * Web3.bio at `upstreamUrl` (client rate limit off) and `env`; returns its exit code and output.
 */
export async function runCli(
  script: string,
  upstreamUrl: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [script, ...args], {
      env: { PATH: process.env.PATH ?? '', WEB3BIO_API_URL: upstreamUrl, WEB3BIO_RATE_LIMIT: 'off', ...env },
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}
