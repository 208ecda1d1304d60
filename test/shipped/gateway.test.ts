/**
 * The built bot as one process (`npm start` with the defaults: INTERACTIONS=gateway, PROCESS_ROLE=all),
 * with gating on PostgreSQL and the cache in Redis: every kind of outbound call, acted out (scenario.ts).
 */
import { afterAll, beforeAll, describe } from 'vitest';
import { type FakeDiscord, startFakeDiscord } from '../../fakes/discord/server.ts';
import { type FakeWeb3Bio, startFakeWeb3Bio } from '../../fakes/web3bio/server.ts';
import { createDatabase } from '../e2e/postgresDatabase.ts';
import { freePort } from '../e2e/processes.ts';
import { actOut, type Deployment, redisPrefix, seedGuild, sharedEnv } from './scenario.ts';
import { READY, type ShippedProcess, startShipped } from './shippedBot.ts';

describe('npm start, one process over the gateway (PROCESS_ROLE=all)', () => {
  let discord: FakeDiscord;
  let upstream: FakeWeb3Bio;
  let db: Awaited<ReturnType<typeof createDatabase>>;
  let bot: ShippedProcess;
  let deployment: Deployment;

  beforeAll(async () => {
    [discord, upstream, db] = await Promise.all([
      startFakeDiscord(),
      startFakeWeb3Bio(),
      createDatabase('shipped_gateway'),
    ]);
    const { guild, humanRoleId } = seedGuild(discord);
    const port = await freePort();
    const prefix = redisPrefix('gateway');
    bot = await startShipped(
      { ...sharedEnv(discord, upstream, db.url, prefix), HTTP_PORT: String(port) },
      READY.bot,
    );
    deployment = {
      discord,
      upstream,
      guild,
      humanRoleId,
      pagesUrl: `http://127.0.0.1:${port}`,
      databaseUrl: db.url,
      redisPrefix: prefix,
      processes: () => [bot],
    };
  }, 90_000);

  afterAll(async () => {
    await bot?.stop();
    await Promise.all([discord?.close(), upstream?.close()]);
    await db?.drop();
  });

  actOut(() => deployment);
});
