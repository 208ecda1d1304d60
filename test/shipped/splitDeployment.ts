/**
 * The split deployment as compose.yaml's http profile runs it, from the bundle: the gateway worker
 * (PROCESS_ROLE=gateway) and two web replicas (PROCESS_ROLE=web) on `env`, the stand-in Discord POSTing
 * interactions to the first replica; both replicas serve the pages.
 */
import { freePort } from '../e2e/processes.ts';
import type { Deployment, Stage } from './scenario.ts';
import { READY, type ShippedProcess, startShipped } from './shippedBot.ts';

export interface SplitDeployment {
  worker: ShippedProcess;
  web: ShippedProcess;
  web2: ShippedProcess;
  urls: Pick<Deployment, 'pagesUrl' | 'otherPagesUrl'>;
}

export async function startSplitDeployment(
  stage: Stage,
  env: Record<string, string>,
): Promise<SplitDeployment> {
  const http = { ...env, INTERACTIONS: 'http' };
  const [workerPort, webPort, web2Port] = [await freePort(), await freePort(), await freePort()];
  const worker = await startShipped(
    { ...http, PROCESS_ROLE: 'gateway', HTTP_PORT: String(workerPort) },
    READY.bot,
  );
  const replica = (port: number) =>
    startShipped({ ...http, PROCESS_ROLE: 'web', HTTP_PORT: String(port) }, READY.replica);
  const [web, web2] = await Promise.all([replica(webPort), replica(web2Port)]);
  stage.discord.useInteractionsEndpoint(`http://127.0.0.1:${webPort}/interactions`);
  return {
    worker,
    web,
    web2,
    urls: { pagesUrl: `http://127.0.0.1:${webPort}`, otherPagesUrl: `http://127.0.0.1:${web2Port}` },
  };
}
