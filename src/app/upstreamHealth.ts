/**
 * The dashboard's upstream health from the bot's own metrics: every minute, each process adds what its
 * Web3.bio requests did since its last sample (requests, errors, time spent, slow ones; from
 * `web3bio_requests_total` and `web3bio_request_seconds`) to the shared store's minute, so whichever
 * process serves a page shows every process's traffic. Minutes older than two days are deleted.
 */
import type { Logger } from '../ops/log.ts';
import type { BotMetrics } from '../ops/metrics.ts';
import type { DashboardStore, UpstreamSample } from '../store/types.ts';

const SAMPLE_MS = 60_000;
const KEEP_MINUTES = 2 * 24 * 60;
const PRUNE_EVERY = 60;
/** Requests slower than this count as slow (a bucket boundary of `web3bio_request_seconds`). */
const SLOW_SECONDS = 1;

/** What counts as an upstream error: 5xx, 429, timeouts and network failures (not a 404: a real answer). */
export function isUpstreamError(status: string): boolean {
  if (status === 'timeout' || status === 'network') return true;
  const code = Number(status);
  return code === 429 || (code >= 500 && code <= 599);
}

/** The process's totals so far, read from its registry. */
export async function upstreamTotals(metrics: Pick<BotMetrics, 'upstreamRequests' | 'upstreamSeconds'>) {
  const requests = await metrics.upstreamRequests.get();
  const seconds = await metrics.upstreamSeconds.get();
  let count = 0;
  let errors = 0;
  for (const v of requests.values) {
    count += v.value;
    if (isUpstreamError(String(v.labels.status ?? ''))) errors += v.value;
  }
  let sum = 0;
  let timed = 0;
  let fast = 0;
  for (const v of seconds.values) {
    if (v.metricName === 'web3bio_request_seconds_sum') sum += v.value;
    else if (v.metricName === 'web3bio_request_seconds_count') timed += v.value;
    else if (
      v.metricName === 'web3bio_request_seconds_bucket' &&
      Number((v.labels as Record<string, unknown>).le) === SLOW_SECONDS
    )
      fast += v.value;
  }
  return { requests: count, errors, seconds: sum, slow: timed - fast };
}

/** Samples the process's upstream metrics into the store every minute while started. */
export class UpstreamHealthSampler {
  readonly #o: {
    metrics: Pick<BotMetrics, 'upstreamRequests' | 'upstreamSeconds'>;
    store: Pick<DashboardStore, 'addUpstreamMinute' | 'deleteUpstreamMinutes'>;
    logger: Logger;
    now: () => number;
    sampleMs: number;
  };
  #last: UpstreamSample = { requests: 0, errors: 0, seconds: 0, slow: 0 };
  #timer: NodeJS.Timeout | null = null;
  #samples = 0;

  constructor(o: {
    metrics: Pick<BotMetrics, 'upstreamRequests' | 'upstreamSeconds'>;
    store: Pick<DashboardStore, 'addUpstreamMinute' | 'deleteUpstreamMinutes'>;
    logger: Logger;
    now?: () => number;
    sampleMs?: number;
  }) {
    this.#o = { now: Date.now, sampleMs: SAMPLE_MS, ...o };
  }

  start(): void {
    if (this.#timer) return;
    void upstreamTotals(this.#o.metrics).then((totals) => {
      this.#last = totals;
    });
    this.#timer = setInterval(() => void this.sample(), this.#o.sampleMs);
    this.#timer.unref();
  }

  /** Adds what changed since the last sample to the current minute (nothing when nothing did). */
  async sample(): Promise<void> {
    try {
      const totals = await upstreamTotals(this.#o.metrics);
      const delta: UpstreamSample = {
        requests: totals.requests - this.#last.requests,
        errors: totals.errors - this.#last.errors,
        seconds: Math.max(0, totals.seconds - this.#last.seconds),
        slow: Math.max(0, totals.slow - this.#last.slow),
      };
      this.#last = totals;
      const minute = Math.floor(this.#o.now() / 60_000);
      if (delta.requests > 0) await this.#o.store.addUpstreamMinute(minute, delta);
      this.#samples += 1;
      if (this.#samples % PRUNE_EVERY === 1) await this.#o.store.deleteUpstreamMinutes(minute - KEEP_MINUTES);
    } catch (error) {
      this.#o.logger.warn({ err: error }, 'could not record the upstream health');
    }
  }

  /** Writes the last sample and stops. */
  async stop(): Promise<void> {
    if (!this.#timer) return;
    clearInterval(this.#timer);
    this.#timer = null;
    await this.sample();
  }
}
