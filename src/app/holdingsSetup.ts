/**
 * Holdings rules' chain reads from config (issue #35): a reader for the chains whose RPC URL is set, its
 * failures counted in `/metrics` (`holdings_rpc_failures_total{chain,failure}`) and each chain's state
 * as a gauge (`holdings_rpc_failing{chain}`: 1 while its last read failed).
 */
import { Counter, Gauge } from 'prom-client';
import { type ChainRpcSetting, configuredChains } from '../gating/holdings/chains.ts';
import { HoldingsReader } from '../gating/holdings/holdingsReader.ts';
import type { RecheckEvent } from '../gating/rechecks/guildRechecks.ts';
import type { BotMetrics } from '../ops/metrics.ts';
import { countRecheck } from './botMetrics.ts';
import type { Config } from './config.ts';

export type HoldingsConfig = Partial<Pick<Config, ChainRpcSetting>> &
  Pick<Config, 'HOLDINGS_RPC_REQUESTS_PER_SECOND'>;

/** The holdings reader, or undefined when no chain's RPC URL is set (holdings rules are then refused). */
export function holdingsReaderOf(config: HoldingsConfig, metrics?: BotMetrics): HoldingsReader | undefined {
  const chains = configuredChains(config);
  if (chains.length === 0) return undefined;
  const registers = metrics ? [metrics.registry] : [];
  const failures = new Counter({
    name: 'holdings_rpc_failures_total',
    help: 'Holdings reads a chain node failed, by chain and failure (unreachable: error, timeout or 429; nonsense)',
    labelNames: ['chain', 'failure'],
    registers,
  });
  const reader = new HoldingsReader({
    chains,
    requestsPerSecond: config.HOLDINGS_RPC_REQUESTS_PER_SECOND,
    onFailure: (chain, failure) => failures.inc({ chain, failure }),
  });
  new Gauge({
    name: 'holdings_rpc_failing',
    help: 'Whether the last holdings read of a chain node failed (1) or worked (0)',
    labelNames: ['chain'],
    registers,
    collect() {
      for (const h of reader.health()) this.set({ chain: h.chain }, h.failing ? 1 : 0);
    },
  });
  return reader;
}

/**
 * What the gating service reports to `/metrics`: each guild's re-check (`countRecheck`) and, with holdings
 * rules' chains configured, the reader whose failing chains are counted (holdingsSetup.ts).
 */
export function measuredGating(
  config: HoldingsConfig,
  metrics: BotMetrics,
): { onRechecked: (event: RecheckEvent) => void; holdings: ReturnType<typeof holdingsReaderOf> } {
  return {
    onRechecked: (event) => countRecheck(metrics, event),
    holdings: holdingsReaderOf(config, metrics),
  };
}
