/**
 * For the http suite's memory and start-up tables (bench/http.ts): the web replica branch of
 * src/app/main.ts alone, with the same steps in the same order (dotenv, config, logger, metrics, the
 * Web3.bio client, `startWebReplica`, the heartbeat, SIGTERM), but without main.ts's static imports of
 * bot.ts (discord.js, viem through the gating service, pg) and sharding.ts (discord-hybrid-sharding),
 * which a web replica never calls. The difference to `node src/app/main.ts` is what those imports cost.
 */
import 'dotenv/config';
import { configSecrets, loadConfig } from '../src/app/config.ts';
import { runsAsWebReplica, startWebReplica } from '../src/app/httpMode.ts';
import { createWeb3BioFromConfig } from '../src/app/wiring.ts';
import { startHeartbeat } from '../src/ops/heartbeat.ts';
import { createLogger } from '../src/ops/log.ts';
import { createMetrics } from '../src/ops/metrics.ts';

async function main(): Promise<void> {
  const config = loadConfig(process.env);
  if (!runsAsWebReplica(config)) throw new Error('bench/httpReplicaMain.ts runs a web replica only');
  const logger = createLogger({ level: config.LOG_LEVEL, secrets: configSecrets(config) });
  const metrics = createMetrics();
  const web3bio = createWeb3BioFromConfig(config, logger, metrics);
  const replica = await startWebReplica({ config, logger, web3bio, metrics });
  const stopHeartbeat = await startHeartbeat(config.DATA_DIR, () => true);
  process.once('SIGTERM', () => {
    stopHeartbeat();
    void replica
      .stop()
      .then(() => web3bio.close())
      .finally(() => logger.flush());
  });
}

main().catch((error: unknown) => {
  console.error('The replica could not start:', error instanceof Error ? error.message : String(error));
  process.exitCode = 1;
});
