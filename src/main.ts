import 'dotenv/config';
import { startBot } from './bot.ts';
import { ConfigError, ConfigSchema, configSecrets, loadConfig } from './config.ts';
import { startHeartbeat } from './heartbeat.ts';
import { createLogger } from './log.ts';
import { createMetrics } from './metrics.ts';
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
  const web3bio = createWeb3BioFromConfig(config, logger, metrics);
  const bot = await startBot({ config, logger, web3bio, metrics });
  const stopHeartbeat = await startHeartbeat(config.DATA_DIR, () => bot.client.isReady());

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    stopHeartbeat();
    await bot.stop();
    await web3bio.close();
    logger.info('stopped');
    logger.flush();
  };
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
  process.once('SIGINT', () => void shutdown('SIGINT'));
}

main().catch((error: unknown) => {
  if (error instanceof ConfigError) console.error(error.message);
  else console.error('The bot could not start:', error instanceof Error ? error.message : String(error));
  process.exitCode = 1;
});
