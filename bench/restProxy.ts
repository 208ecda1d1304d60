/**
 * `npm run bench -- --only rest-proxy` (issue #37): N callers (the bot's processes, each a REST client
 * configured as the bot configures its own) each making M role edits at once, straight to a stand-in
 * Discord that enforces a global 50 requests a second per bot token and 10-a-second role buckets per
 * guild, and the same through PROCESS_ROLE=rest-proxy: the 429s the stand-in answered, the wall time, and
 * the edits made (once each).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { editsMade, roleEditWorld, runRoleEditCallers } from '../fakes/discord/roleEditCallers.ts';
import { type FakeDiscord, roleEditBucket, startFakeDiscord } from '../fakes/discord/server.ts';
import { type BenchTable, formatNumber, median, verdict } from './stats.ts';

const MAIN = fileURLToPath(new URL('../src/app/main.js', import.meta.url));
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const GLOBAL_PER_SECOND = 50;
const GUILDS = 8;
const BUCKET = { limit: 10, windowMs: 1_000 };
/** The proxy keeps Discord's 50 in any 1.25 s (restProxy.ts): its floor is a quarter above Discord's. */
const PROXY_WINDOW_S = 1.25;
/** Through the proxy, the wall time may exceed the proxy's floor by this share (plus a second). */
const WALL_TOLERANCE = 0.2;

interface Shape {
  callers: number;
  editsPerCaller: number;
}

interface Round {
  wallMs: number;
  global429s: number;
  route429s: number;
  madeOnce: number;
  failed: number;
}

/** The proxy as an operator runs it, from the sources; resolves with its URL once "rest proxy ready". */
async function startProxy(discord: FakeDiscord): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [MAIN], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      PROCESS_ROLE: 'rest-proxy',
      DISCORD_TOKEN: discord.token,
      DISCORD_API_URL: discord.apiUrl,
      REST_PROXY_PORT: '0',
      LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout ?? process.stdin });
  for await (const line of lines) {
    const entry = JSON.parse(line) as { msg?: string; port?: number };
    if (entry.msg !== 'rest proxy ready') continue;
    child.stdout?.resume();
    return { child, url: `http://127.0.0.1:${entry.port}` };
  }
  throw new Error('the rest proxy exited before it was ready');
}

async function runRound(shape: Shape, viaProxy: boolean): Promise<Round> {
  const discord = await startFakeDiscord();
  const proxy = viaProxy ? await startProxy(discord) : null;
  try {
    const edits = roleEditWorld(discord, { guilds: GUILDS, ...shape });
    discord.enforceRateLimits({
      globalPerSecond: GLOBAL_PER_SECOND,
      routes: [roleEditBucket(BUCKET.limit, BUCKET.windowMs)],
    });
    const run = await runRoleEditCallers(proxy ? `${proxy.url}/api` : discord.apiUrl, discord.token, edits);
    return {
      wallMs: run.wallMs,
      ...discord.rateLimitCounts,
      madeOnce: editsMade(discord, edits).filter((count) => count === 1).length,
      failed: run.failed,
    };
  } finally {
    if (proxy) {
      proxy.child.kill('SIGTERM');
      await once(proxy.child, 'exit');
    }
    await discord.close();
  }
}

/** One table: per shape, a row straight to Discord and a row through the proxy (medians of rounds). */
export async function runRestProxyBench(options: {
  quick: boolean;
  progress: (line: string) => void;
}): Promise<BenchTable[]> {
  const shapes: Shape[] = options.quick
    ? [{ callers: 6, editsPerCaller: 10 }]
    : [
        { callers: 6, editsPerCaller: 40 },
        { callers: 12, editsPerCaller: 40 },
      ];
  const rounds = options.quick ? 1 : 3;
  const rows: string[][] = [];
  for (const shape of shapes) {
    for (const viaProxy of [false, true]) {
      const results: Round[] = [];
      for (let round = 0; round < rounds; round += 1) {
        options.progress(
          `rest-proxy: ${shape.callers} × ${shape.editsPerCaller} ${viaProxy ? 'via proxy' : 'direct'}, round ${round + 1}`,
        );
        results.push(await runRound(shape, viaProxy));
      }
      rows.push(row(shape, viaProxy, results));
    }
  }
  return [
    {
      suite:
        'One Discord REST budget: N callers × M role edits, straight to Discord and through PROCESS_ROLE=rest-proxy (issue #37)',
      method: `${rounds} round(s) per row, medians of rounds (edits made once: the fewest of any round); each round a fresh stand-in Discord (in this process) enforcing ${GLOBAL_PER_SECOND} requests a second per bot token (fixed windows from the first request) and a role bucket of ${BUCKET.limit} per ${BUCKET.windowMs} ms per guild over ${GUILDS} guilds (${GUILDS * BUCKET.limit}/s of buckets: the global limit binds); each caller a child process (fakes/discord/roleEditCaller.ts) with a @discordjs/rest client configured as the bot configures its own, its own limiter as each bot process has, all told to go at once, each then starting all its PUT role edits; the proxy is \`node src/app/main.js\` with PROCESS_ROLE=rest-proxy, a child process; floor = (⌈edits ÷ ${GLOBAL_PER_SECOND}⌉ − 1) s, the earliest the last edit can go under Discord's global limit, and × ${PROXY_WINDOW_S} through the proxy, which keeps ${GLOBAL_PER_SECOND} in any ${PROXY_WINDOW_S} s`,
      targets: [
        `via proxy: 0 429s answered in every round, every edit made once, wall ≤ the proxy's floor + ${WALL_TOLERANCE * 100}% + 1 s`,
        'direct: shown for comparison (the 429s each process meets alone)',
      ],
      columns: [
        'Callers × edits',
        'Path',
        'Global 429s',
        'Route 429s',
        'Edits made once',
        'Failed',
        'Wall s',
        'Floor s',
        'Result',
      ],
      rows,
    },
  ];
}

function row(shape: Shape, viaProxy: boolean, results: readonly Round[]): string[] {
  const edits = shape.callers * shape.editsPerCaller;
  const floorS = (Math.ceil(edits / GLOBAL_PER_SECOND) - 1) * (viaProxy ? PROXY_WINDOW_S : 1);
  const wallS = median(results.map((r) => r.wallMs)) / 1_000;
  const global429s = median(results.map((r) => r.global429s));
  const route429s = median(results.map((r) => r.route429s));
  const madeOnce = Math.min(...results.map((r) => r.madeOnce));
  const failed = Math.max(...results.map((r) => r.failed));
  const ok =
    results.every((r) => r.global429s + r.route429s === 0 && r.madeOnce === edits) &&
    wallS <= floorS * (1 + WALL_TOLERANCE) + 1;
  return [
    `${shape.callers} × ${shape.editsPerCaller}`,
    viaProxy ? 'via rest-proxy' : 'direct',
    formatNumber(global429s),
    formatNumber(route429s),
    `${formatNumber(madeOnce)} / ${formatNumber(edits)}`,
    formatNumber(failed),
    formatNumber(wallS, 2),
    formatNumber(floorS, 2),
    viaProxy ? verdict(ok) : '',
  ];
}
