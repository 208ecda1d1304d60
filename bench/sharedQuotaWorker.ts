/**
 * One bot process of the shared-quota benchmark (bench/sharedQuota.ts): the client as the bot builds it
 * from config (`createWeb3BioFromConfig`), told over IPC which identities to look up and when to start.
 * Reports its answers, failures and the statuses the upstream gave (from its metrics).
 */
import { loadConfig } from '../src/app/config.ts';
import { createWeb3BioFromConfig } from '../src/app/wiring.ts';
import { createLogger } from '../src/ops/log.ts';
import { createMetrics } from '../src/ops/metrics.ts';
import { parseIdentity } from '../src/web3bio/identity.ts';

export interface WorkerStart {
  env: Record<string, string>;
  identities: string[];
}

export interface WorkerReport {
  answered: number;
  failed: number;
  /** Upstream attempts by HTTP status (or failure kind), from the process's metrics. */
  statuses: Record<string, number>;
  /** Process time of the last answer relative to `go`, ms. */
  lastAnswerMs: number;
  /** Whether the rate limiter used the shared quota the whole time. */
  shared: boolean;
}

type Message = { type: 'start'; start: WorkerStart } | { type: 'go' };

let start: WorkerStart | undefined;

process.on('message', (message: Message) => {
  if (message.type === 'start') {
    start = message.start;
    // ens-normalize builds its tables on first use: not inside the measured burst.
    parseIdentity('vitalik.eth');
    process.send?.({ type: 'ready' });
  } else if (message.type === 'go' && start) void run(start);
});

async function run({ env, identities }: WorkerStart): Promise<void> {
  const config = loadConfig(env);
  const logger = createLogger({ level: 'warn', secrets: [], destination: { write: () => {} } });
  const metrics = createMetrics({ defaultMetrics: false });
  const client = createWeb3BioFromConfig(config, logger, metrics);
  const began = performance.now();
  let answered = 0;
  let failed = 0;
  let lastAnswerMs = 0;
  await Promise.all(
    identities.map((identity) =>
      client.getProfiles(identity).then(
        () => {
          answered++;
          lastAnswerMs = performance.now() - began;
        },
        () => {
          failed++;
          lastAnswerMs = performance.now() - began;
        },
      ),
    ),
  );
  const statuses: Record<string, number> = {};
  for (const value of (await metrics.upstreamRequests.get()).values) {
    const status = String(value.labels.status);
    statuses[status] = (statuses[status] ?? 0) + value.value;
  }
  const sharedGauge = (await metrics.limiterShared.get()).values[0]?.value;
  await client.close();
  const report: WorkerReport = { answered, failed, statuses, lastAnswerMs, shared: sharedGauge === 1 };
  process.send?.({ type: 'done', report }, () => process.exit(0));
}
