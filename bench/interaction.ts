/**
 * Issue #3: the interaction path. A slash command dispatched over the stand-in gateway until its final
 * message reaches the stand-in REST, for `/whois` on a cache hit and on a miss, against two commands that
 * answer a constant through the same bot, router and REST path in the same run: `/ping` ("pong") and
 * `/ping-embed` (the message /whois renders, so the difference to it is the lookup and the render alone).
 */

import { randomUUID } from 'node:crypto';
import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import { commandsFor } from '../commands/index.ts';
import { type FakeDiscord, type InteractionResult, startFakeDiscord } from '../fakes/discord/server.ts';
import { deleteKeys, REDIS_URL } from '../fakes/localRedis.ts';
import { type FakeWeb3Bio, startFakeWeb3Bio } from '../fakes/web3bio/server.ts';
import { type Bot, startBot } from '../src/app/bot.ts';
import { configSecrets, loadConfig } from '../src/app/config.ts';
import { createWeb3BioFromConfig } from '../src/app/wiring.ts';
import { closeRedisClient, createRedisClient } from '../src/cache/redisStore.ts';
import type { Command } from '../src/discord/command.ts';
import { encodeCustomId } from '../src/discord/customId.ts';
import { createLogger } from '../src/ops/log.ts';
import type { MessagePayload } from '../src/render/types.ts';
import { renderWhois } from '../src/render/whois.ts';
import type { Web3BioClient } from '../src/web3bio/client.ts';
import { addBenchProfiles } from './profiles.ts';
import {
  type BenchTable,
  formatNumber,
  median,
  medianOfRounds,
  rotate,
  type Summary,
  summarize,
  verdict,
} from './stats.ts';

export interface InteractionBenchOptions {
  /** A short smoke run: one round, few interactions. */
  quick?: boolean;
  /** Rounds; default 5 (quick: 1). */
  rounds?: number;
  /** Per round: interactions of each baseline and of cache hits, default 200 (quick: 20). */
  hits?: number;
  /** Per round: cache-miss interactions, each a distinct identity; default 50 (quick: 5). */
  misses?: number;
  /** Stand-in upstream latency, ms; default 50. */
  upstreamLatencyMs?: number;
  progress?: (line: string) => void;
}

const HIT_RATIO_TARGET = 1.5;
/** Issue #17: an autocomplete answer (type 8, from the recent lookups) against the constant /ping. */
const AUTOCOMPLETE_RATIO_TARGET = 1.5;
const HIT_IDENTITY = 'vitalik.eth';
const USER_ID = '300000000000000001';
const PING_PAYLOAD: MessagePayload = {
  content: 'pong',
  embeds: [],
  components: [],
  allowed_mentions: { parse: [] },
};

/** The baseline: a command that answers a constant through the same router and REST path. */
export const PING_COMMAND: Command = constantCommand('ping', PING_PAYLOAD);

/** A command answering `payload` every time, with no lookup and no rendering. */
export function constantCommand(name: string, payload: MessagePayload): Command {
  return {
    data: { name, description: 'Answers a constant (benchmark baseline)' },
    async answer() {
      return payload;
    },
  };
}

type CaseName =
  | 'baseline /ping'
  | 'baseline /ping-embed'
  | '/whois cache hit'
  | '/whois cache miss'
  | 'autocomplete "vit"';
const BASELINES = ['baseline /ping', 'baseline /ping-embed'] as const;

interface Case {
  name: CaseName;
  run: () => Promise<InteractionResult>;
  /** Whether the response is the one this case expects (an interaction that errored does not count). */
  check: (result: InteractionResult) => boolean;
}

interface Setup {
  discord: FakeDiscord;
  upstream: FakeWeb3Bio;
  web3bio: Web3BioClient;
  bot: Bot;
  /** The Redis prefix to clean up, when the run used Redis. */
  redisPrefix: string | undefined;
}

/** The cache the bot runs with: in-process, or Redis (behind the in-process L1) under a fresh prefix. */
type Store = 'memory' | 'redis';

async function start(
  latencyMs: number,
  missIdentities: number,
  store: Store,
): Promise<Setup & { misses: string[] }> {
  const upstream = await startFakeWeb3Bio({ latencyMs });
  const misses = addBenchProfiles(upstream.world, 0, missIdentities);
  const discord = await startFakeDiscord();
  const guild = discord.addGuild({ name: 'Bench Guild' });
  discord.addMember(guild.id, { id: USER_ID, username: 'bench' });
  const config = loadConfig({
    DISCORD_API_URL: discord.apiUrl,
    DISCORD_TOKEN: discord.token,
    DISCORD_APPLICATION_ID: discord.applicationId,
    WEB3BIO_API_URL: upstream.url,
    WEB3BIO_RATE_LIMIT: 'off',
    USER_COOLDOWN_COMMANDS: '0',
    LOG_LEVEL: 'info',
    ...(store === 'redis' ? { REDIS_URL, REDIS_PREFIX: `web3bio-bench:${randomUUID()}:` } : {}),
  });
  // Logged as in production (same serialisation work per interaction), then dropped.
  const logger = createLogger({
    level: config.LOG_LEVEL,
    secrets: configSecrets(config),
    destination: { write: () => {} },
  });
  const web3bio = createWeb3BioFromConfig(config, logger);
  try {
    // The second baseline answers the very message /whois renders for the hit identity, as a constant.
    const profiles = await web3bio.getProfiles(HIT_IDENTITY);
    const selectId = encodeCustomId('whois', 'select', '', HIT_IDENTITY);
    const render = {
      locale: 'en-US',
      nowSec: Math.floor(Date.now() / 1_000),
      ipfsGateway: config.IPFS_GATEWAY,
    };
    const embedPayload = renderWhois(profiles.data, 0, render, selectId);
    const commands = [...commandsFor(config), PING_COMMAND, constantCommand('ping-embed', embedPayload)];
    const bot = await startBot({ config, logger, web3bio, commands });
    return {
      discord,
      upstream,
      web3bio,
      bot,
      misses,
      redisPrefix: config.REDIS_URL ? config.REDIS_PREFIX : undefined,
    };
  } catch (error) {
    await Promise.allSettled([web3bio.close(), discord.close(), upstream.close()]);
    throw error;
  }
}

async function stop(setup: Setup): Promise<void> {
  await setup.bot.stop(5_000);
  await Promise.allSettled([setup.web3bio.close(), setup.discord.close(), setup.upstream.close()]);
  if (setup.redisPrefix !== undefined) {
    const admin = createRedisClient(REDIS_URL);
    await new Promise((resolve) => admin.once('ready', resolve));
    await deleteKeys(admin, `${setup.redisPrefix}*`);
    await closeRedisClient(admin);
  }
}

function whois(discord: FakeDiscord, identity: string): Promise<InteractionResult> {
  return discord.runCommand({
    name: 'whois',
    userId: USER_ID,
    options: [{ name: 'identity', type: ApplicationCommandOptionType.String, value: identity }],
  });
}

const hasEmbed = (result: InteractionResult) => (result.message?.embeds.length ?? 0) > 0;

/** Typing "vit" into /whois's identity: answered from the recent lookups (the hits put vitalik.eth there). */
function typeVit(discord: FakeDiscord): Promise<InteractionResult> {
  return discord.typeInOption({ name: 'whois', focused: 'identity', value: 'vit', userId: USER_ID });
}

const suggestsHit = (result: InteractionResult) =>
  result.callbacks[0]?.type === 8 && result.callbacks[0]?.data?.choices?.[0]?.value === HIT_IDENTITY;

/** Run the interaction suite, with the in-process cache and with Redis; one table. */
export async function runInteractionBench(options: InteractionBenchOptions = {}): Promise<BenchTable[]> {
  const quick = options.quick === true;
  const settings = {
    quick,
    rounds: options.rounds ?? (quick ? 1 : 5),
    hits: options.hits ?? (quick ? 20 : 200),
    missCount: options.misses ?? (quick ? 5 : 50),
    latencyMs: options.upstreamLatencyMs ?? 50,
    progress: options.progress ?? (() => {}),
  };
  const { rounds, hits, missCount, latencyMs } = settings;
  const memory = await measure('memory', settings);
  const redis = await measure('redis', settings);
  return [
    {
      suite:
        'Interaction path: gateway dispatch → final message (or autocomplete answer) at the stand-in REST, /whois and autocomplete vs constant answers (issues #3, #9, #17)',
      method: `${rounds} round(s) × (${formatNumber(hits)}  each of /ping, /ping-embed, /whois hits and autocomplete answers to "vit" typed into /whois (type 4 → type 8, suggested from the recent lookups), + ${formatNumber(missCount)} /whois misses, each miss a distinct identity), one at a time, case order rotated every iteration; real startBot + discord.js against the stand-in Discord and Web3.bio in this process; /ping answers "pong", /ping-embed answers the message /whois renders for ${HIT_IDENTITY} as a constant (same size, no lookup, no render); stand-in upstream latency ${latencyMs} ms; run once with the in-process cache (${memory.upstreamRequests} upstream requests during the rounds, one per miss expected) and once with REDIS_URL set (Redis on 127.0.0.1 behind the in-process L1, a fresh key prefix; ${redis.upstreamRequests} upstream requests), each against its own /ping; medians of rounds, ratios the median of per-round p50 ratios`,
      targets: [
        `/whois cache-hit p50 ≤ ${HIT_RATIO_TARGET}× the constant /ping's, with the memory store and with Redis`,
        `autocomplete answer p50 ≤ ${AUTOCOMPLETE_RATIO_TARGET}× the constant /ping's, with the memory store and with Redis (issue #17)`,
      ],
      columns: [
        'Case',
        'Interactions',
        'p50 ms',
        'p90 ms',
        'p99 ms',
        'p50 vs /ping',
        'p50 vs /ping-embed',
        'Wrong answers',
        'Target',
        'Result',
      ],
      rows: [...memory.rows, ...redis.rows],
    },
  ];
}

/** One variant's rows: the four cases against a bot whose cache is `store`. */
async function measure(
  store: Store,
  settings: {
    quick: boolean;
    rounds: number;
    hits: number;
    missCount: number;
    latencyMs: number;
    progress: (line: string) => void;
  },
): Promise<{ rows: string[][]; upstreamRequests: number }> {
  const { quick, rounds, hits, missCount, latencyMs, progress } = settings;
  const setup = await start(latencyMs, rounds * missCount, store);
  const { discord, upstream } = setup;
  const missIdentities = [...setup.misses];
  const cases: Case[] = [
    {
      name: 'baseline /ping',
      run: () => discord.runCommand({ name: 'ping', userId: USER_ID }),
      check: (result) => result.message?.content === 'pong',
    },
    {
      name: 'baseline /ping-embed',
      run: () => discord.runCommand({ name: 'ping-embed', userId: USER_ID }),
      check: hasEmbed,
    },
    { name: '/whois cache hit', run: () => whois(discord, HIT_IDENTITY), check: hasEmbed },
    {
      name: '/whois cache miss',
      run: () => whois(discord, missIdentities.shift() ?? HIT_IDENTITY),
      check: hasEmbed,
    },
    { name: 'autocomplete "vit"', run: () => typeVit(discord), check: suggestsHit },
  ];
  const [ping, pingEmbed, hit, miss, autocomplete] = cases as [Case, Case, Case, Case, Case];
  const perRound = new Map<CaseName, Summary[]>(cases.map((c) => [c.name, []]));
  const failures = new Map<CaseName, number>(cases.map((c) => [c.name, 0]));
  try {
    // Warm-up: JIT, and the gateway and REST connections.
    for (let i = 0; i < (quick ? 5 : 30); i++)
      for (const item of [ping, pingEmbed, hit, autocomplete]) await item.run();
    const upstreamBefore = upstream.requests.length;
    for (let round = 0; round < rounds; round++) {
      progress(`interaction (${store}): round ${round + 1}/${rounds}`);
      const times = new Map<CaseName, number[]>(cases.map((c) => [c.name, []]));
      // Misses are spread evenly among the hits; the order of the cases rotates every iteration.
      const missEvery = Math.max(1, Math.floor(hits / missCount));
      let missesLeft = missCount;
      for (let i = 0; i < hits; i++) {
        const due = [ping, pingEmbed, hit, autocomplete];
        if (missesLeft > 0 && i % missEvery === 0) {
          due.push(miss);
          missesLeft--;
        }
        for (const item of rotate(due, i)) {
          const result = await item.run();
          if (!item.check(result)) failures.set(item.name, (failures.get(item.name) ?? 0) + 1);
          times.get(item.name)?.push(result.doneMs);
        }
      }
      for (const [name, list] of times) perRound.get(name)?.push(summarize(list));
    }
    const upstreamRequests = upstream.requests.length - upstreamBefore;
    /** Median over rounds of this case's p50 divided by the baseline's p50 in the same round. */
    const ratioTo = (name: CaseName, baseline: CaseName) => {
      const base = perRound.get(baseline) ?? [];
      return median((perRound.get(name) ?? []).map((s, i) => s.p50 / (base[i]?.p50 ?? Number.NaN)));
    };
    const targets = new Map<CaseName, number>([
      [hit.name, HIT_RATIO_TARGET],
      [autocomplete.name, AUTOCOMPLETE_RATIO_TARGET],
    ]);
    const label = store === 'redis' ? ' · REDIS_URL' : '';
    const rows = cases.map(({ name }) => {
      const summary = medianOfRounds(perRound.get(name) ?? []);
      const wrong = failures.get(name) ?? 0;
      const target = targets.get(name);
      return [
        `${name}${label}`,
        formatNumber(summary.n),
        formatNumber(summary.p50, 2),
        formatNumber(summary.p90, 2),
        formatNumber(summary.p99, 2),
        ...BASELINES.map((baseline) => `${formatNumber(ratioTo(name, baseline), 2)}×`),
        formatNumber(wrong),
        target === undefined ? '' : `p50 ≤ ${target}× /ping's`,
        target === undefined ? '' : verdict(ratioTo(name, ping.name) <= target && wrong === 0),
      ];
    });
    return { rows, upstreamRequests };
  } finally {
    await stop(setup);
  }
}
