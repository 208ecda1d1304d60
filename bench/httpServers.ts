/**
 * The server process of the HTTP interactions benchmark (bench/http.ts), pinned to one core by the
 * parent. Mode `replica` (argv[2]): a web replica (`startWebReplica`, INTERACTIONS=http, the config the
 * parent sends) and, in the same process, a bare `node:http` endpoint that only checks the request
 * signature (`checkDiscordSignature`, the bot's own node:crypto ed25519 check) and answers a constant JSON
 * body, and a third, the floor: what any replica must do before it may answer (issue #37's CPU ratio) — the
 * bare endpoint's read and check, then the JSON parse, the envelope check and the shared replay claim
 * (`SharedDeliveries` on the replica's Redis, under a prefix of its own) — and then the same constant body
 * (no Fastify, no router, no render, no log line). Mode `gateway`: the bot in gateway mode (`startBot`, discord.js) against the parent's stand-in
 * Discord, for the comparison row. Logs are made as in production, then dropped.
 *
 * IPC: the parent sends `{ type: 'start', env }`; this answers `{ type: 'ready', replicaUrl?, bareUrl? }`.
 * `{ type: 'body', body }` sets the bare endpoint's constant answer; `{ type: 'cpu' }` is answered with
 * this process's CPU time; `{ type: 'stop' }` closes everything and exits.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { startBot } from '../src/app/bot.ts';
import { configSecrets, loadConfig } from '../src/app/config.ts';
import { startWebReplica } from '../src/app/httpMode.ts';
import { createWeb3BioFromConfig } from '../src/app/wiring.ts';
import { closeRedisClient, createRedisClient, untilRedisReady } from '../src/cache/redisStore.ts';
import { createLogger, type Logger } from '../src/ops/log.ts';
import { checkDiscordSignature, parseJson } from '../src/web/discordSignature.ts';
import { InteractionEnvelope } from '../src/web/interactions.ts';
import { listenHttp } from '../src/web/listen.ts';
import { SharedDeliveries } from '../src/web/seenDeliveries.ts';

export type ServerMode = 'replica' | 'gateway';

export type HttpServersMessage =
  | { type: 'ready'; replicaUrl?: string; bareUrl?: string; floorUrl?: string }
  | { type: 'cpu'; userMicros: number; systemMicros: number }
  | { type: 'body-set' };

type ParentMessage =
  | { type: 'start'; env: Record<string, string> }
  | { type: 'body'; body: string }
  | { type: 'cpu' }
  | { type: 'stop' };

/** What a signed POST carries, read in full: its body, its two signature headers, and whether it is a POST. */
type Received = { body: Buffer; signature?: string; timestamp?: string; post: boolean };

/** A node:http server that reads each request in full and hands it to `answer`; closed with its connections. */
async function plainServer(
  answer: (received: Received, res: ServerResponse) => void,
): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const header = (name: string) => {
        const value = req.headers[name];
        return typeof value === 'string' ? value : undefined;
      };
      answer(
        {
          body: Buffer.concat(chunks),
          signature: header('x-signature-ed25519'),
          timestamp: header('x-signature-timestamp'),
          post: req.method === 'POST',
        },
        res,
      );
    });
  });
  const { url } = await listenHttp(server, 0, '127.0.0.1');
  return {
    url,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}

const refuse = (res: ServerResponse, status: number) =>
  res.writeHead(status, { 'content-type': 'application/json' }).end('{"error":"refused"}');
const send = (res: ServerResponse, answer: Buffer) =>
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': answer.length }).end(answer);

/** Whether a request carries a valid signature by `publicKey`, checked as the bot checks it. */
const signed = (publicKey: string, received: Received) =>
  received.post &&
  checkDiscordSignature({
    publicKey,
    signature: received.signature,
    timestamp: received.timestamp,
    body: received.body,
    now: Date.now(),
  }) === 'ok';

/**
 * The baseline: POST with Discord's signature headers, checked exactly as the bot checks them, then a
 * constant body; anything unsigned is a 401, as on the bot.
 */
function startBare(publicKey: string, body: () => Buffer) {
  return plainServer((received, res) => (signed(publicKey, received) ? send(res, body()) : refuse(res, 401)));
}

/**
 * The floor: the bare endpoint's check, then what the bot's route does before it may act (the JSON parse,
 * the envelope and its application, the shared replay claim), then the same constant body.
 */
async function startFloor(config: ReturnType<typeof loadConfig>, logger: Logger, body: () => Buffer) {
  const redis = createRedisClient(config.REDIS_URL);
  await untilRedisReady(redis);
  const ledger = new SharedDeliveries({ redis, prefix: `${config.REDIS_PREFIX}bench-floor:`, logger });
  const server = await plainServer((received, res) => {
    if (!signed(config.DISCORD_PUBLIC_KEY ?? '', received)) return refuse(res, 401);
    const envelope = InteractionEnvelope.safeParse(parseJson(received.body));
    if (!envelope.success || envelope.data.application_id !== config.DISCORD_APPLICATION_ID)
      return refuse(res, 400);
    const first = ledger.firstSighting(envelope.data.id, Number(received.timestamp), Date.now());
    const judged = (sighting: boolean | 'unjudged') =>
      sighting === true ? send(res, body()) : refuse(res, 401);
    if (typeof first === 'boolean') judged(first);
    else first.then(judged, () => refuse(res, 500));
  });
  return {
    url: server.url,
    close: async () => {
      await server.close();
      await ledger.close();
      await closeRedisClient(redis);
    },
  };
}

async function start(
  mode: ServerMode,
  env: Record<string, string>,
): Promise<{ ready: HttpServersMessage; close: () => Promise<void>; setBody: (body: string) => void }> {
  const config = loadConfig(env);
  const logger = createLogger({
    level: config.LOG_LEVEL,
    secrets: configSecrets(config),
    destination: { write: () => {} },
  });
  const web3bio = createWeb3BioFromConfig(config, logger);
  if (mode === 'gateway') {
    const bot = await startBot({ config, logger, web3bio });
    return {
      ready: { type: 'ready' },
      setBody: () => {},
      close: async () => {
        await bot.stop(5_000);
        await web3bio.close();
      },
    };
  }
  const replica = await startWebReplica({ config, logger, web3bio });
  let constant = Buffer.from('{"type":4,"data":{"content":"pong"}}');
  const bare = await startBare(config.DISCORD_PUBLIC_KEY ?? '', () => constant);
  const floor = config.REDIS_URL === undefined ? undefined : await startFloor(config, logger, () => constant);
  return {
    ready: { type: 'ready', replicaUrl: replica.url, bareUrl: bare.url, floorUrl: floor?.url },
    setBody: (body) => {
      constant = Buffer.from(body);
    },
    close: async () => {
      await bare.close();
      await floor?.close();
      await replica.stop(5_000);
      await web3bio.close();
    },
  };
}

if (import.meta.main) {
  const mode: ServerMode = process.argv[2] === 'gateway' ? 'gateway' : 'replica';
  let close: () => Promise<void> = async () => {};
  let setBody: (body: string) => void = () => {};
  const exit = () => void close().finally(() => process.exit(0));
  process.on('message', (message: ParentMessage) => {
    if (message.type === 'start') {
      start(mode, message.env).then(
        (started) => {
          close = started.close;
          setBody = started.setBody;
          process.send?.(started.ready);
        },
        (error: unknown) => {
          console.error('bench server could not start:', error);
          process.exit(1);
        },
      );
    } else if (message.type === 'body') {
      setBody(message.body);
      process.send?.({ type: 'body-set' } satisfies HttpServersMessage);
    } else if (message.type === 'cpu') {
      const usage = process.cpuUsage();
      process.send?.({
        type: 'cpu',
        userMicros: usage.user,
        systemMicros: usage.system,
      } satisfies HttpServersMessage);
    } else if (message.type === 'stop') exit();
  });
  // The parent went away without a stop: do not linger.
  process.on('disconnect', exit);
}
