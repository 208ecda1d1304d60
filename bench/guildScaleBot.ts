/**
 * One bot process of the guild-scale benchmark (bench/guildScale.ts): the real `startBot` with gating on,
 * configured from the env it is sent, with the bot's caches or discord.js's defaults. Reports when every
 * guild is ready, runs one re-check pass over all gating guilds when told, and what discord.js holds.
 * Started with --expose-gc: before each report it runs the memory-reducing collection V8 runs under memory
 * pressure, so the parent's RSS reading is what the process keeps, not the young generation and free
 * pages V8 keeps committed between collections.
 */
import type { Client } from 'discord.js';
import { type Bot, startBot } from '../src/app/bot.ts';
import { loadConfig } from '../src/app/config.ts';
import { createWeb3BioFromConfig } from '../src/app/wiring.ts';
import type { CachePolicy } from '../src/discord/clientCaches.ts';
import { createLogger } from '../src/ops/log.ts';
import { createMetrics } from '../src/ops/metrics.ts';

export interface BotStart {
  env: Record<string, string>;
  caches: CachePolicy;
  /** Guilds re-checked at once during the pass. */
  concurrency: number;
}

export interface BotReport {
  /** From calling startBot to its resolving (every GUILD_CREATE received). */
  readyMs?: number;
  passMs?: number;
  guilds: number;
  membersWalked?: number;
  /** What discord.js caches: members and users over all guilds. */
  cachedMembers: number;
  cachedUsers: number;
  heapUsedBytes: number;
}

type Message = { type: 'start'; start: BotStart } | { type: 'pass' } | { type: 'stop' };

let bot: Bot | undefined;
let settings: BotStart | undefined;

process.on('message', (message: Message) => {
  if (message.type === 'start') void start(message.start);
  else if (message.type === 'pass') void pass();
  else if (message.type === 'stop') void stop();
});

async function start(start: BotStart): Promise<void> {
  settings = start;
  const config = loadConfig(start.env);
  const logger = createLogger({ level: 'warn', secrets: [], destination: process.stderr });
  const metrics = createMetrics({ defaultMetrics: false });
  const web3bio = createWeb3BioFromConfig(config, logger, metrics);
  const began = performance.now();
  bot = await startBot({ config, logger, web3bio, metrics, discordCaches: start.caches });
  const readyMs = performance.now() - began;
  process.send?.({ type: 'ready', report: report(bot.client, { readyMs }) });
}

async function pass(): Promise<void> {
  const service = bot?.gating?.service;
  if (!bot || !service) throw new Error('the bot has no gating service');
  const ids = [...bot.client.guilds.cache.keys()];
  const began = performance.now();
  let membersWalked = 0;
  let next = 0;
  const lane = async () => {
    for (let id = ids[next++]; id !== undefined; id = ids[next++]) {
      const result = await service.guilds.recheckGuild(id, { cause: 'bench' });
      membersWalked += result.members;
    }
  };
  await Promise.all(Array.from({ length: settings?.concurrency ?? 4 }, lane));
  await service.idle();
  const passMs = performance.now() - began;
  process.send?.({ type: 'passed', report: report(bot.client, { passMs, membersWalked }) });
}

async function stop(): Promise<void> {
  await bot?.stop(1_000);
  process.exit(0);
}

function report(client: Client, timings: Partial<BotReport>): BotReport {
  (globalThis as { gc?: (o?: object) => void }).gc?.({
    type: 'major',
    execution: 'sync',
    flavor: 'last-resort',
  });
  let cachedMembers = 0;
  for (const guild of client.guilds.cache.values()) cachedMembers += guild.members.cache.size;
  return {
    ...timings,
    guilds: client.guilds.cache.size,
    cachedMembers,
    cachedUsers: client.users.cache.size,
    heapUsedBytes: process.memoryUsage().heapUsed,
  };
}
