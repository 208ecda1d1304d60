/**
 * The built bot as one process (`npm start` with the defaults: INTERACTIONS=gateway, PROCESS_ROLE=all),
 * with gating on PostgreSQL and the cache in Redis: every kind of outbound call, acted out (scenario.ts),
 * and a /verify whose COMMIT the database ends mid-way (droppedCommit.ts).
 */
import { afterAll, beforeAll, describe } from 'vitest';
import { freePort } from '../e2e/processes.ts';
import { actOutDroppedCommit } from './droppedCommit.ts';
import { actOut, type Deployment, type Stage, seedGuild, startStage } from './scenario.ts';
import { READY, type ShippedProcess, startShipped } from './shippedBot.ts';

describe('npm start, one process over the gateway (PROCESS_ROLE=all)', () => {
  let stage: Stage;
  let bot: ShippedProcess;
  let deployment: Deployment;

  beforeAll(async () => {
    stage = await startStage('gateway');
    const seeded = seedGuild(stage.discord);
    const port = await freePort();
    bot = await startShipped({ ...stage.env, HTTP_PORT: String(port) }, READY.bot);
    deployment = { ...stage, ...seeded, pagesUrl: `http://127.0.0.1:${port}`, processes: () => [bot] };
  }, 90_000);

  afterAll(async () => {
    await bot?.stop();
    await stage?.close();
  });

  actOut(() => deployment);
  actOutDroppedCommit(() => deployment);
});
