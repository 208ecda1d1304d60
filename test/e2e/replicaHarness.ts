/** Web replicas (INTERACTIONS=http) against the stand-ins, for the end-to-end tests. */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type FakeDiscord, startFakeDiscord } from '../../fakes/discord/server.ts';
import { createDatabase } from '../../fakes/localPostgres.ts';
import { startRoundRobin } from '../../fakes/roundRobin.ts';
import { type FakeWeb3Bio, startFakeWeb3Bio } from '../../fakes/web3bio/server.ts';
import { configSecrets, loadConfig } from '../../src/app/config.ts';
import { startWebReplica, type WebReplica } from '../../src/app/httpMode.ts';
import { createWeb3BioFromConfig } from '../../src/app/wiring.ts';
import { createLogger } from '../../src/ops/log.ts';
import { startGating } from './gatingHarness.ts';
import { ALICE, fakesEnv, type HarnessOptions, type LogLine } from './harness.ts';

export interface Replica {
  replica: WebReplica;
  logs: LogLine[];
  endpoint: string;
  close(): Promise<void>;
}

/** A web replica (INTERACTIONS=http) against the stand-ins, logging into `logs`. */
export async function startReplica(
  discord: FakeDiscord,
  upstream: FakeWeb3Bio,
  env: Record<string, string> = {},
): Promise<Replica> {
  const dataDir = await mkdtemp(join(tmpdir(), 'e2e-replica-'));
  const config = loadConfig({
    ...fakesEnv(discord, upstream, dataDir),
    INTERACTIONS: 'http',
    PUBLIC_URL: 'https://bot.example.test',
    HTTP_HOST: '127.0.0.1',
    HTTP_PORT: '0',
    LOG_LEVEL: 'info',
    ...env,
  });
  const logs: LogLine[] = [];
  const logger = createLogger({
    level: config.LOG_LEVEL,
    secrets: configSecrets(config),
    destination: { write: (line: string) => void logs.push(JSON.parse(line) as LogLine) },
  });
  const web3bio = createWeb3BioFromConfig(config, logger);
  const replica = await startWebReplica({ config, logger, web3bio });
  return {
    replica,
    logs,
    endpoint: `${replica.url}/interactions`,
    async close() {
      await replica.stop();
      await web3bio.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** The stand-in Discord (a guild with Alice in it) and Web3.bio a replica is tested against. */
export async function startStandIns(): Promise<{ discord: FakeDiscord; upstream: FakeWeb3Bio }> {
  const [discord, upstream] = await Promise.all([startFakeDiscord(), startFakeWeb3Bio()]);
  const guild = discord.addGuild({ name: 'Gate Guild' });
  discord.addMember(guild.id, { id: ALICE, username: 'alice' });
  return { discord, upstream };
}

const ENCRYPTION_KEY = 'ab'.repeat(32);

/**
 * A split deployment on a database of its own: the gateway worker (with `gatewayEnv`), and two web
 * replicas (pushed to `replicas`) behind a round-robin that the stand-in Discord POSTs to.
 */
export async function startSplit(
  name: string,
  redis: Record<string, string>,
  replicas: Replica[],
  gatewayEnv: Record<string, string> = {},
  guild?: HarnessOptions['guild'],
) {
  const db = await createDatabase(name);
  const shared = {
    INTERACTIONS: 'http',
    DATABASE_URL: db.url,
    TOKEN_ENCRYPTION_KEY: ENCRYPTION_KEY,
    ...redis,
  };
  const g = await startGating({
    env: { ...shared, PROCESS_ROLE: 'gateway', ...gatewayEnv },
    ...(guild ? { guild } : {}),
  });
  const replicaEnv = {
    ...shared,
    PROCESS_ROLE: 'web',
    GATING_ENABLED: 'true',
    PUBLIC_URL: 'https://verify.example.test',
    USER_COOLDOWN_COMMANDS: '100',
  };
  for (let i = 0; i < 2; i++) replicas.push(await startReplica(g.h.discord, g.h.upstream, replicaEnv));
  const lb = await startRoundRobin(replicas.map((r) => r.replica.url));
  g.h.discord.useInteractionsEndpoint(`${lb.url}/interactions`);
  return { db, g, lb };
}

/** The replicas' log lines saying an interaction went to the worker. */
export function handedOverIn(replicas: Replica[]) {
  return replicas.flatMap((r) => r.logs).filter((l) => l.msg === 'interaction handed to the gateway worker');
}
