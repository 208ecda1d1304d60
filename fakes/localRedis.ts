/** The Redis on this machine that the tests and benchmarks use, and how they clear what they wrote. */
import type { Redis } from 'ioredis';

export const REDIS_URL = 'redis://127.0.0.1:6379';

/** Deletes every key matching `pattern` (a test's or a run's own prefix). */
export async function deleteKeys(client: Redis, pattern: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', pattern, 'COUNT', 500);
    if (keys.length > 0) await client.del(...keys);
    cursor = next;
  } while (cursor !== '0');
}
