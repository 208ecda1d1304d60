/**
 * `npm start` for a process with a gateway connection: the bot (one process, or a shard process), or the
 * shard manager with SHARD_COUNT. run.ts imports this only then, so a web replica never loads discord.js.
 */

import { MemoryRecentLookups } from '../cache/recentLookups.ts';
import { startHeartbeat } from '../ops/heartbeat.ts';
import type { Logger } from '../ops/log.ts';
import type { BotMetrics } from '../ops/metrics.ts';
import { startBot } from './bot.ts';
import type { Config } from './config.ts';
import { joinShardManager, ShardRecentLookups, shardProcessSlice, startShardManager } from './sharding.ts';
import { createWeb3BioFromConfig } from './wiring.ts';

/** Starts the process's part and returns how to stop it; `shutdown` is called when the shard manager is gone. */
export async function startGatewayProcess(
  config: Config,
  logger: Logger,
  metrics: BotMetrics,
  shutdown: (reason: string) => void,
): Promise<() => Promise<void>> {
  const shardProcess = shardProcessSlice();
  const log = shardProcess
    ? logger.child({ process: shardProcess.processId, shards: shardProcess.shards.ids, pid: process.pid })
    : logger;
  const web3bio = createWeb3BioFromConfig(config, log, metrics);
  if (config.SHARD_COUNT !== undefined && !shardProcess) {
    // The shard manager: spawns this entry point once per process of shards, serves HTTP once.
    const manager = await startShardManager({
      config,
      logger,
      metrics,
      web3bio,
      entry: process.argv[1] ?? '',
    });
    return async () => {
      await manager.stop();
      await web3bio.close();
    };
  }
  // Without Redis each shard process keeps its own lists: /forget-lookups clears them in all (sharding.ts).
  const lookups =
    shardProcess && !config.REDIS_URL ? new ShardRecentLookups(new MemoryRecentLookups()) : undefined;
  // The manager gone while this shard process is still starting (killed, or stopped before the bot was
  // up): nothing is in flight yet, so leave at once rather than run unmanaged (and unstoppable) forever.
  const leaveWhileStarting = () => {
    log.warn('shard manager gone while this shard process was starting: exiting');
    log.flush();
    process.exit(1);
  };
  if (shardProcess) process.once('disconnect', leaveWhileStarting);
  const bot = await startBot({
    config,
    logger: log,
    web3bio,
    metrics,
    ...(shardProcess ? { shards: shardProcess.shards } : {}),
    ...(lookups ? { recentLookups: lookups } : {}),
  });
  const stopHeartbeat = shardProcess
    ? () => {}
    : await startHeartbeat(config.DATA_DIR, () => bot.client.isReady());
  if (shardProcess) {
    process.off('disconnect', leaveWhileStarting);
    joinShardManager(bot, log, lookups);
    // The manager is gone (its IPC channel closed): stop rather than run unmanaged.
    if (process.connected) process.once('disconnect', () => shutdown('manager gone'));
    else shutdown('manager gone');
  }
  return async () => {
    stopHeartbeat();
    await bot.stop();
    await web3bio.close();
    // A forked shard process stays alive while its IPC channel to the manager is open.
    if (shardProcess && process.connected) process.disconnect?.();
  };
}
