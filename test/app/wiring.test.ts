import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REDIS_URL } from '../../fakes/localRedis.ts';

const ROOT = join(import.meta.dirname, '..', '..');

/** Runs `source` as an ES module in a fresh Node process; resolves with its exit code (null: killed). */
function runModule(source: string, timeoutMs: number): Promise<number | null> {
  return new Promise((resolve) => {
    const child = execFile(process.execPath, ['--input-type=module', '-e', source], {
      cwd: ROOT,
      timeout: timeoutMs,
    });
    child.on('exit', (code) => resolve(code));
  });
}

describe('createWeb3BioFromConfig with REDIS_URL', () => {
  it('closes every Redis connection it opened (cache, L1 invalidation, rate limiter) on close()', async () => {
    const prefix = `web3bio-test:${randomUUID()}:`;
    const source = `
      import { loadConfig } from './src/app/config.ts';
      import { createLogger } from './src/ops/log.ts';
      import { createWeb3BioFromConfig } from './src/app/wiring.ts';
      const config = loadConfig({
        DISCORD_TOKEN: 't', DISCORD_APPLICATION_ID: '100000000000000001',
        WEB3BIO_API_URL: 'http://127.0.0.1:9', WEB3BIO_RATE_LIMIT: '5/1s', WEB3BIO_TIMEOUT_MS: '200',
        REDIS_URL: '${REDIS_URL}', REDIS_PREFIX: '${prefix}',
      });
      const client = createWeb3BioFromConfig(config, createLogger({ level: 'silent', secrets: [] }));
      await new Promise((resolve) => setTimeout(resolve, 300));
      await client.getProfiles('vitalik.eth', { timeoutMs: 100 }).catch(() => undefined);
      await client.close();
      // Nothing keeps the event loop alive now: the process ends by itself with code 0.
    `;
    expect(await runModule(source, 20_000)).toBe(0);
  });
});
