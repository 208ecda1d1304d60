/**
 * The bot process: config, logs and metrics, then a web replica, a gateway process or the REST proxy
 * (main.js starts it).
 */
import 'dotenv/config';
import { startHeartbeat } from '../ops/heartbeat.ts';
import { createLogger, type Logger } from '../ops/log.ts';
import { createMetrics } from '../ops/metrics.ts';
import { ConfigError, ConfigSchema, configSecrets, loadConfig, runsAsWebReplica } from './config.ts';
import { loadRestProxyConfig } from './restProxyConfig.ts';
import { createWeb3BioFromConfig } from './wiring.ts';

const USAGE = `web3bio-discord-bot: Discord embeds for web3 identities, from the Web3.bio Profile API.

Usage: npm start            run the bot (reads .env, see .env.example)
       npm start -- --help  this text

Configuration keys (environment or .env):
  ${Object.keys(ConfigSchema.shape).join('\n  ')}
`;

/** A stop that takes longer than this has hung: the process exits anyway. */
const SHUTDOWN_DEADLINE_MS = 30_000;

async function main(): Promise<void> {
  if (process.argv.includes('--help') || process.argv.includes('-h')) {
    // Every module either kind of process runs is loaded: `--help` also checks an install is complete.
    await Promise.all([import('./httpMode.ts'), import('./gatewayProcess.ts'), import('./restProxy.ts')]);
    process.stdout.write(USAGE);
    return;
  }
  // The REST proxy reads only its own keys (restProxyConfig.ts): no application id, Redis or database.
  if (process.env.PROCESS_ROLE?.trim() === 'rest-proxy') {
    await runRestProxy();
    return;
  }
  const config = loadConfig(process.env);
  const logger = createLogger({
    level: config.LOG_LEVEL,
    secrets: configSecrets(config),
  });
  process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled rejection'));

  const metrics = createMetrics();
  let stop: () => Promise<void> = async () => {};
  const shutdown = gracefulShutdown(logger, () => stop());

  // Each kind of process imports only what it runs: a web replica never loads discord.js or the sharding code.
  if (runsAsWebReplica(config)) {
    // INTERACTIONS=http without a gateway connection (httpMode.ts).
    const { startWebReplica } = await import('./httpMode.ts');
    const web3bio = createWeb3BioFromConfig(config, logger, metrics);
    const replica = await startWebReplica({ config, logger, web3bio, metrics });
    const stopHeartbeat = await startHeartbeat(config.DATA_DIR, () => true);
    stop = async () => {
      stopHeartbeat();
      await replica.stop();
      await web3bio.close();
    };
  } else {
    const { startGatewayProcess } = await import('./gatewayProcess.ts');
    stop = await startGatewayProcess(config, logger, metrics, (reason) => void shutdown(reason));
  }
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}

/** PROCESS_ROLE=rest-proxy: the bot's one Discord REST budget (restProxy.ts), until SIGTERM. */
async function runRestProxy(): Promise<void> {
  const config = loadRestProxyConfig(process.env);
  const logger = createLogger({ level: config.LOG_LEVEL, secrets: configSecrets(config) });
  process.on('unhandledRejection', (reason) => logger.error({ err: reason }, 'unhandled rejection'));
  const { startRestProxy } = await import('./restProxy.ts');
  const proxy = await startRestProxy(config, logger);
  // The image's own health check (src/ops/healthcheck.ts) reads this heartbeat, as for the other roles.
  const stopHeartbeat = await startHeartbeat(config.DATA_DIR, () => true);
  const shutdown = gracefulShutdown(logger, async () => {
    stopHeartbeat();
    await proxy.stop();
  });
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}

/** A signal's stop: logged, run once, and the process exits anyway after SHUTDOWN_DEADLINE_MS. */
function gracefulShutdown(logger: Logger, stop: () => Promise<void>): (signal: string) => Promise<void> {
  let stopping = false;
  return async (signal) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    // Whatever a stop leaves hanging (a connection that never closes), the process still ends, so its
    // supervisor can start it again. Longer than every drain (the shard manager waits 15 s per process).
    setTimeout(() => {
      logger.error({ signal, deadlineMs: SHUTDOWN_DEADLINE_MS }, 'shutdown did not finish in time: exiting');
      logger.flush();
      process.exit(1);
    }, SHUTDOWN_DEADLINE_MS).unref();
    await stop();
    logger.info('stopped');
    logger.flush();
  };
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) console.error(error.message);
  else console.error('The bot could not start:', error instanceof Error ? error.message : String(error));
  process.exitCode = 1;
});
