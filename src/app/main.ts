import 'dotenv/config';
import { startHeartbeat } from '../ops/heartbeat.ts';
import { createLogger } from '../ops/log.ts';
import { createMetrics } from '../ops/metrics.ts';
import { startBot } from './bot.ts';
import { ConfigError, ConfigSchema, configSecrets, loadConfig } from './config.ts';
import { runsAsWebReplica, startWebReplica } from './httpMode.ts';
import { joinShardManager, shardProcessSlice, startShardManager } from './sharding.ts';
import { createWeb3BioFromConfig } from './wiring.ts';

const USAGE = `web3bio-discord-bot: Discord embeds for web3 identities, from the Web3.bio Profile API.

Usage: npm start            run the bot (reads .env, see .env.example)
       npm start -- --help  this text

Configuration keys (environment or .env):
  ${Object.keys(ConfigSchema.shape).join('\n  ')}
`;

async function main(): Promise<void> {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    process.stdout.write(USAGE);
    return;
  }
  const config = loadConfig(process.env);
  const logger = createLogger({
    level: config.LOG_LEVEL,
    secrets: configSecrets(config),
  });
  process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled rejection'));

  const metrics = createMetrics();
  const shardProcess = shardProcessSlice();
  const log = shardProcess
    ? logger.child({ process: shardProcess.processId, shards: shardProcess.shards.ids, pid: process.pid })
    : logger;
  const web3bio = createWeb3BioFromConfig(config, log, metrics);

  let stop: () => Promise<void>;
  if (runsAsWebReplica(config)) {
    // INTERACTIONS=http without a gateway connection (httpMode.ts).
    const replica = await startWebReplica({ config, logger, web3bio, metrics });
    const stopHeartbeat = await startHeartbeat(config.DATA_DIR, () => true);
    stop = async () => {
      stopHeartbeat();
      await replica.stop();
    };
  } else if (config.SHARD_COUNT !== undefined && !shardProcess) {
    // The shard manager: spawns this entry point once per process of shards, serves HTTP once.
    const manager = await startShardManager({
      config,
      logger,
      metrics,
      web3bio,
      entry: process.argv[1] ?? '',
    });
    stop = () => manager.stop();
  } else {
    const bot = await startBot({
      config,
      logger: log,
      web3bio,
      metrics,
      ...(shardProcess ? { shards: shardProcess.shards } : {}),
    });
    const stopHeartbeat = shardProcess
      ? () => {}
      : await startHeartbeat(config.DATA_DIR, () => bot.client.isReady());
    if (shardProcess) {
      joinShardManager(bot, log);
      // The manager is gone (its IPC channel closed): stop rather than run unmanaged.
      process.once('disconnect', () => void shutdown('manager gone'));
    }
    stop = async () => {
      stopHeartbeat();
      await bot.stop();
      // A forked shard process stays alive while its IPC channel to the manager is open.
      if (shardProcess && process.connected) process.disconnect?.();
    };
  }

  let stopping = false;
  async function shutdown(signal: string): Promise<void> {
    if (stopping) return;
    stopping = true;
    log.info({ signal }, 'shutting down');
    await stop();
    await web3bio.close();
    log.info('stopped');
    log.flush();
  }
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) console.error(error.message);
  else console.error('The bot could not start:', error instanceof Error ? error.message : String(error));
  process.exitCode = 1;
});
