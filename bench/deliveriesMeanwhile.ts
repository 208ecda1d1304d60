/**
 * Discord's deliveries while a replica is under attack (issue #33): presigned interactions POSTed one
 * every `everyMs` from 127.0.0.1, each on its own without waiting for the one before, as Discord sends
 * them; each one's status and time to its whole answer.
 */
import { Pool } from 'undici';
import { formatNumber, percentile } from './stats.ts';

export interface PresignedDelivery {
  body: string;
  headers: Record<string, string>;
}

export interface DeliveryResult {
  status: number;
  ms: number;
}

/** Starts delivering `requests` in turn to `url` + `path`; `stop` ends it and resolves once every answer is in. */
export function deliverMeanwhile(
  url: string,
  path: string,
  requests: readonly PresignedDelivery[],
  everyMs: number,
): { stop(): Promise<DeliveryResult[]> } {
  const pool = new Pool(url, { connections: 16 });
  const sent: Promise<DeliveryResult>[] = [];
  let next = 0;
  const post = async (request: PresignedDelivery): Promise<DeliveryResult> => {
    const started = performance.now();
    try {
      const response = await pool.request({
        path,
        method: 'POST',
        headers: { 'content-type': 'application/json', ...request.headers },
        body: request.body,
      });
      await response.body.text();
      return { status: response.statusCode, ms: performance.now() - started };
    } catch {
      return { status: 0, ms: performance.now() - started };
    }
  };
  const timer = setInterval(() => {
    const request = requests[next++];
    if (request) sent.push(post(request));
  }, everyMs);
  return {
    async stop() {
      clearInterval(timer);
      const results = await Promise.all(sent);
      await pool.close();
      return results;
    },
  };
}

/** "72 of 72 × 200 within 3,000 ms (p50 4 ms, max 40 ms)", and whether at least `share` of them were. */
export function deliveriesSummary(
  results: readonly DeliveryResult[],
  withinMs: number,
  share: number,
): { text: string; ok: boolean } {
  const inTime = results.filter((r) => r.status === 200 && r.ms <= withinMs).length;
  const others = new Map<number, number>();
  for (const r of results) if (r.status !== 200) others.set(r.status, (others.get(r.status) ?? 0) + 1);
  const sorted = results.map((r) => r.ms).sort((a, b) => a - b);
  const refused = [...others]
    .map(([status, n]) => `, ${formatNumber(n)} × ${status || 'no answer'}`)
    .join('');
  const timing =
    sorted.length === 0
      ? ''
      : ` (p50 ${formatNumber(percentile(sorted, 50))} ms, max ${formatNumber(sorted.at(-1) ?? 0)} ms)`;
  return {
    text: `${formatNumber(inTime)} of ${formatNumber(results.length)} × 200 within ${formatNumber(withinMs)} ms${refused}${timing}`,
    ok: results.length > 0 && inTime / results.length >= share,
  };
}
