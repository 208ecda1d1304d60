/**
 * The built bot split as an HTTP-interactions deployment runs it: a web replica (PROCESS_ROLE=web)
 * answers what Discord POSTs and serves the pages, and hands gating to the gateway worker
 * (PROCESS_ROLE=gateway) through PostgreSQL; all share Redis. A second web replica serves the pages too
 * (the dashboard's session, made on one, is used on the other). Every kind of outbound call, acted out
 * (scenario.ts), whichever process makes it, and a /verify whose COMMIT the database ends mid-way
 * (droppedCommit.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actOutDroppedCommit } from './droppedCommit.ts';
import { actOut, type Deployment, type Stage, seedGuild, startStage } from './scenario.ts';
import type { ShippedProcess } from './shippedBot.ts';
import { startSplitDeployment } from './splitDeployment.ts';

describe('npm start split: a web replica and the gateway worker (INTERACTIONS=http)', () => {
  let stage: Stage;
  let web: ShippedProcess;
  let web2: ShippedProcess;
  let worker: ShippedProcess;
  let deployment: Deployment;

  beforeAll(async () => {
    stage = await startStage('split');
    const seeded = seedGuild(stage.discord);
    const split = await startSplitDeployment(stage, stage.env);
    ({ worker, web, web2 } = split);
    deployment = { ...stage, ...seeded, ...split.urls, processes: () => [web, web2, worker] };
  }, 90_000);

  afterAll(async () => {
    await Promise.all([web?.stop(), web2?.stop(), worker?.stop()]);
    await stage?.close();
  });
  it('every interaction reaches the web replica over HTTP; gating ones are handed to the worker', async () => {
    const result = await deployment.discord.runCommand({
      name: 'whoami',
      guildId: deployment.guild.id,
      userId: deployment.guild.ownerId,
      timeoutMs: 15_000,
    });
    expect(result.delivery?.status).toBe(200);
    expect(result.callbacks.map((c) => c.type)).toEqual([5]);
    await web.waitForLog(
      (l) => l.msg === 'interaction handed to the gateway worker' && l.interactionId === result.interactionId,
    );
    expect(deployment.discord.requests.some((r) => r.path.endsWith('/callback'))).toBe(false);
  });

  actOut(() => deployment);
  actOutDroppedCommit(() => deployment);
});
