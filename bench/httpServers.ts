/**
 * The server process of the HTTP interactions benchmark (bench/http.ts), pinned to one core by the
 * parent. Mode `replica` (argv[2]): a web replica (`startWebReplica`, INTERACTIONS=http, the config the
 * parent sends) and, in the same process, a bare `node:http` endpoint that only checks the request
 * signature (`checkDiscordSignature`, the bot's own node:crypto ed25519 check) and answers a constant JSON
 * body. Mode `gateway`: the bot in gateway mode (`startBot`, discord.js) against the parent's stand-in
 * Discord, for the comparison row. Logs are made as in production, then dropped.
 *
 * IPC: the parent sends `{ type: 'start', env }`; this answers `{ type: 'ready', replicaUrl?, bareUrl? }`.
 * `{ type: 'body', body }` sets the bare endpoint's constant answer; `{ type: 'cpu' }` is answered with
 * this process's CPU time; `{ type: 'stop' }` closes everything and exits.
 */
import { createServer } from 'node:http';
import { startBot } from '../src/app/bot.ts';
import { configSecrets, loadConfig } from '../src/app/config.ts';
import { startWebReplica } from '../src/app/httpMode.ts';
import { createWeb3BioFromConfig } from '../src/app/wiring.ts';
import { createLogger } from '../src/ops/log.ts';
import { checkDiscordSignature } from '../src/web/discordSignature.ts';
import { listenHttp } from '../src/web/listen.ts';

export type ServerMode = 'replica' | 'gateway';

export type HttpServersMessage =
  | { type: 'ready'; replicaUrl?: string; bareUrl?: string }
  | { type: 'cpu'; userMicros: number; systemMicros: number }
  | { type: 'body-set' };

type ParentMessage =
  | { type: 'start'; env: Record<string, string> }
  | { type: 'body'; body: string }
  | { type: 'cpu' }
  | { type: 'stop' };

/**
 * The baseline: POST with Discord's signature headers, checked exactly as the bot checks them, then a
 * constant body; anything unsigned is a 401, as on the bot.
 */
async function startBare(
  publicKey: string,
  body: () => Buffer,
): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const header = (name: string) => {
        const value = req.headers[name];
        return typeof value === 'string' ? value : undefined;
      };
      const check = checkDiscordSignature({
        publicKey,
        signature: header('x-signature-ed25519'),
        timestamp: header('x-signature-timestamp'),
        body: Buffer.concat(chunks),
        now: Date.now(),
      });
      if (req.method !== 'POST' || check !== 'ok') {
        res
          .writeHead(401, { 'content-type': 'application/json' })
          .end('{"error":"invalid request signature"}');
        return;
      }
      const answer = body();
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': answer.length }).end(answer);
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
  return {
    ready: { type: 'ready', replicaUrl: replica.url, bareUrl: bare.url },
    setBody: (body) => {
      constant = Buffer.from(body);
    },
    close: async () => {
      await bare.close();
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
