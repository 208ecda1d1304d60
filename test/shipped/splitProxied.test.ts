/**
 * The split deployment (two web replicas and the gateway worker, INTERACTIONS=http) as compose.yaml runs
 * it (issue #37): every process's DISCORD_API_URL at the built PROCESS_ROLE=rest-proxy, DISCORD_WEB_URL at
 * Discord for the members' browsers. Every kind of outbound call (scenario.ts: role edits, webhook
 * answers, a multipart upload, OAuth2 with a member's token, role connections) acted out through the
 * proxy, and every request the stand-in Discord saw came through it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { actOut, type Deployment, type Stage, seedGuild, startStage } from './scenario.ts';
import { READY, type ShippedProcess, startShipped } from './shippedBot.ts';
import { startSplitDeployment } from './splitDeployment.ts';

describe('npm start split, every process sending its Discord REST through PROCESS_ROLE=rest-proxy', () => {
  let stage: Stage;
  let proxy: ShippedProcess;
  let web: ShippedProcess;
  let web2: ShippedProcess;
  let worker: ShippedProcess;
  let deployment: Deployment;

  beforeAll(async () => {
    stage = await startStage('proxied');
    const seeded = seedGuild(stage.discord);
    proxy = await startShipped(
      {
        PROCESS_ROLE: 'rest-proxy',
        DISCORD_TOKEN: stage.discord.token,
        DISCORD_API_URL: stage.discord.apiUrl,
        REST_PROXY_PORT: '0',
      },
      READY.restProxy,
    );
    const ready = await proxy.waitForLog(READY.restProxy);
    const split = await startSplitDeployment(stage, {
      ...stage.env,
      DISCORD_API_URL: `http://127.0.0.1:${String(ready.port)}/api`,
      DISCORD_WEB_URL: stage.discord.apiUrl,
    });
    ({ worker, web, web2 } = split);
    deployment = { ...stage, ...seeded, ...split.urls, processes: () => [web, web2, worker, proxy] };
  }, 120_000);

  afterAll(async () => {
    await Promise.all([web?.stop(), web2?.stop(), worker?.stop()]);
    await proxy?.stop();
    await stage?.close();
  });

  actOut(() => deployment);

  it('every request the stand-in Discord saw came through the proxy, and none was answered 429', async () => {
    const { requests } = deployment.discord;
    expect(requests.length).toBeGreaterThan(20);
    const direct = requests.filter((r) => !String(r.headers.via ?? '').includes('web3bio-rest-proxy'));
    expect(direct.map((r) => `${r.method} ${r.path}`)).toEqual([]);
    expect(requests.filter((r) => r.status === 429)).toEqual([]);
    const health = await fetch(
      `http://127.0.0.1:${String((await proxy.waitForLog(READY.restProxy)).port)}/healthz`,
    );
    expect(await health.json()).toMatchObject({ ok: true, refusedTokens: 0, discord429s: 0 });
  });
});
