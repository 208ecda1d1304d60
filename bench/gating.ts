/**
 * Issue #4: a whole-guild re-check under both rate limits. N linked members (seeded straight into the
 * store) are re-checked by the real GatingService against the stand-in Web3.bio, which answers 429 above
 * `upstreamRps`, and through discord.js against the stand-in Discord, which answers 429 above
 * `discordRps` role edits per second in the guild. A share of the members (`changeRatio`) needs a role
 * change, half an add and half a removal; everyone else already holds what the rules want.
 *
 * The floor: every member costs one credential lookup, and every change one role edit. The service
 * overlaps the two (changes are queued while the walk goes on, and the role worker applies them at
 * once), so the floor is max(N / upstreamRps, changes / discordRps), not their sum.
 *
 * Run directly: node bench/gating.ts --members 10000 --upstream-rps 500 --discord-rps 50 --change-ratio 0.05
 * (add --client-rps N, repeatable, to choose the client limiter rates; --quick for 1,000 members).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { pino } from 'pino';
import { loginClient } from '../fakes/discord/client.ts';
import { type FakeDiscord, type FakeGuild, startFakeDiscord } from '../fakes/discord/server.ts';
import { gatingCredentials } from '../fakes/web3bio/builders.ts';
import { type FakeWeb3Bio, startFakeWeb3Bio } from '../fakes/web3bio/server.ts';
import type { RawCredentials } from '../fakes/web3bio/world.ts';
import { roleSubject } from '../src/gating/rechecks/losses.ts';
import { GatingService } from '../src/gating/service.ts';
import { gatingNoticeText } from '../src/render/gatingNotices.ts';
import { openPostgresStore } from '../src/store/postgresStore.ts';
import { openSqliteStore } from '../src/store/sqliteStore.ts';
import type { GatingStore } from '../src/store/types.ts';
import { Web3BioClient } from '../src/web3bio/client.ts';
import type { TransportLogger } from '../src/web3bio/http.ts';
import { RawCredentialSet, toCredentialSet } from '../src/web3bio/schemas.ts';
import type { CredentialSet } from '../src/web3bio/types.ts';
import { type BenchTable, formatNumber, formatRatio, machineLine, renderTable, verdict } from './stats.ts';

export interface GatingBenchOptions {
  /** Linked members in the guild; default 10,000 (quick: 1,000). */
  members?: number;
  /** The stand-in Web3.bio's limit and the client's rate limiter, requests per second; default 500. */
  upstreamRps?: number;
  /** The stand-in Discord's role-edit limit in the guild, per second; default 50. */
  discordRps?: number;
  /**
   * The client's rate limiter, requests per second, one row each. Default: the upstream rate, then 2%
   * below it (the limiter counts a request when it is sent, the upstream when it arrives: see the notes).
   */
  clientRps?: number[];
  /** Share of members needing a change; default 0.05. */
  changeRatio?: number;
  /** Smaller default guild (1,000 members). */
  quick?: boolean;
  progress?: (line: string) => void;
}

/** One table row: column name -> cell. */
export type Row = Record<string, string | number>;

const WALL_TARGET = 1.2;
const USER_ID_BASE = 500_000_000_000_000_000n;
const SILENT = pino({ level: 'silent' });
const NO_SCHEDULE = { start() {}, stop() {} };

interface Plan {
  userId: string;
  identity: string;
  /** What the stand-in Web3.bio says. */
  human: boolean;
  /** What the member holds before the re-check. */
  holdsRole: boolean;
}

/** Every `1 / changeRatio`-th member needs a change, alternately an add and a removal. */
function planMembers(count: number, changeRatio: number): Plan[] {
  const every = changeRatio > 0 ? Math.max(1, Math.round(1 / changeRatio)) : Number.POSITIVE_INFINITY;
  return Array.from({ length: count }, (_, i) => {
    const changes = i % every === 0;
    const add = Math.floor(i / every) % 2 === 0;
    return {
      userId: String(USER_ID_BASE + BigInt(i)),
      identity: `bench${i}.eth`,
      human: !changes || add,
      holdsRole: !changes || !add,
    };
  });
}

/** Counts the answers the client's transport logs (one debug line per attempt, with its status). */
function statusCounter(): { logger: TransportLogger; statuses: Map<number, number> } {
  const statuses = new Map<number, number>();
  const logger: TransportLogger = {
    debug(obj) {
      const status = (obj as { status?: unknown }).status;
      if (typeof status === 'number') statuses.set(status, (statuses.get(status) ?? 0) + 1);
    },
    warn() {},
  };
  return { logger, statuses };
}

async function seedStore(
  store: GatingStore,
  guildId: string,
  humanRoleId: string,
  plans: Plan[],
  logChannelId: string | null = null,
) {
  await store.saveGuildSettings({
    guildId,
    enabled: true,
    humanRoleId,
    spamRoleId: null,
    riskyRoleId: null,
    minScore: null,
    spamRemovesHuman: true,
    logChannelId,
  });
  const provenAt = Date.now();
  for (const plan of plans) {
    await store.saveLink(
      {
        guildId,
        userId: plan.userId,
        identity: plan.identity,
        platform: 'ens',
        address: null,
        proofMethod: 'signature',
        provenAt,
        // Checked before with the credential: a "not found" now is sudden.
        ...(plan.holdsRole
          ? { lastCheckAt: provenAt, lastCheckOk: true, lastResult: humanCredentials(plan) }
          : {}),
      },
      'bench seed',
    );
    // A removal was first seen two hours ago: this pass is the confirming one (the steady state).
    if (plan.holdsRole && !plan.human) {
      await store.notePendingLoss({
        guildId,
        userId: plan.userId,
        subject: roleSubject(humanRoleId),
        firstSeenAt: provenAt - 2 * 3_600_000,
        reason: 'bench seed',
      });
    }
  }
}

function humanCredentials(plan: Plan): CredentialSet {
  return toCredentialSet(RawCredentialSet.parse(gatingCredentials(plan.identity, { human: true })));
}

interface BenchWorld {
  discord: FakeDiscord;
  upstream: FakeWeb3Bio;
  guild: FakeGuild;
  humanRoleId: string;
  store: GatingStore;
  service: GatingService;
  /** One service per process (`processes`), each with its own Discord client, Web3.bio client and store. */
  services: GatingService[];
}

interface BenchWorldSetup<P extends Plan> {
  plans: P[];
  upstreamRps: number;
  clientRps: number;
  /** What the stand-in Web3.bio answers for a member's identity (null: "not found"). */
  credentialsOf: (plan: P) => RawCredentials | null;
  /** Post the service's notices to the guild's text channel. */
  logChannel?: boolean;
  transportLogger?: TransportLogger;
  now?: () => number;
  /** Bot processes sharing the store; default 1. */
  processes?: number;
  /** Opens one process's store; default an SQLite file in a temporary folder. */
  openStore?: (dataDir: string) => Promise<GatingStore>;
}

/** A guild of linked members on both stand-ins, real clients and services; everything closed after `run`. */
async function withBenchWorld<P extends Plan, T>(
  setup: BenchWorldSetup<P>,
  run: (world: BenchWorld) => Promise<T>,
): Promise<T> {
  const dataDir = await mkdtemp(join(tmpdir(), 'bench-gating-'));
  const openStore = setup.openStore ?? ((dir: string) => openSqliteStore(join(dir, 'bench.sqlite')));
  const closers: (() => Promise<unknown>)[] = [];
  let discord: FakeDiscord | undefined;
  let upstream: FakeWeb3Bio | undefined;
  try {
    discord = await startFakeDiscord();
    upstream = await startFakeWeb3Bio({
      seed: false,
      globalRateLimit: { requests: setup.upstreamRps, windowMs: 1_000 },
    });
    const guild = discord.addGuild({ name: 'Bench Guild' });
    const human = discord.addRole(guild.id, { name: 'Verified Human', position: 2 });
    for (const [i, plan] of setup.plans.entries()) {
      discord.addMember(
        guild.id,
        { id: plan.userId, username: `bench${i}` },
        { roles: plan.holdsRole ? [human.id] : [] },
      );
      upstream.world.setCredentials(plan.identity, setup.credentialsOf(plan));
    }
    const services: GatingService[] = [];
    const stores: GatingStore[] = [];
    for (let i = 0; i < (setup.processes ?? 1); i += 1) {
      const store = await openStore(dataDir);
      closers.unshift(() => store.close());
      if (i === 0) {
        await seedStore(
          store,
          guild.id,
          human.id,
          setup.plans,
          setup.logChannel ? guild.textChannelId : null,
        );
      }
      const client = await loginClient(discord);
      closers.unshift(() => client.destroy());
      const web3bio = new Web3BioClient({
        baseUrl: upstream.url,
        rateLimit: { requests: setup.clientRps, intervalMs: 1_000 },
        ...(setup.transportLogger ? { logger: setup.transportLogger } : {}),
      });
      closers.unshift(() => web3bio.close());
      const service = new GatingService({
        store,
        web3bio,
        discord: client,
        logger: SILENT,
        siwe: { publicUrl: 'https://bench.example.org' },
        noticeText: gatingNoticeText,
        recheckIntervalMs: 24 * 3_600_000,
        scheduler: NO_SCHEDULE,
        logFlushMs: 10,
        ...(setup.now ? { now: setup.now } : {}),
      });
      closers.unshift(() => service.stop());
      services.push(service);
      stores.push(store);
    }
    const [service, store] = [services[0], stores[0]];
    if (!service || !store) throw new Error('no process');
    return await run({ discord, upstream, guild, humanRoleId: human.id, store, service, services });
  } finally {
    for (const close of closers) await close().catch(() => undefined);
    await Promise.allSettled([discord?.close(), upstream?.close()]);
    await rm(dataDir, { recursive: true, force: true });
  }
}

/** Re-check a guild of `members` linked members under both limits; one row per client limiter rate (default: the upstream rate). */
export async function runGatingBench(opts: GatingBenchOptions = {}): Promise<Row[]> {
  const upstreamRps = opts.upstreamRps ?? 500;
  const rates = opts.clientRps ?? [upstreamRps];
  const rows: Row[] = [];
  for (const clientRps of rates) rows.push(await runOnce(opts, clientRps));
  return rows;
}

async function runOnce(opts: GatingBenchOptions, clientRps: number): Promise<Row> {
  const members = opts.members ?? (opts.quick ? 1_000 : 10_000);
  const upstreamRps = opts.upstreamRps ?? 500;
  const discordRps = opts.discordRps ?? 50;
  const changeRatio = opts.changeRatio ?? 0.05;
  const progress = opts.progress ?? (() => {});
  const plans = planMembers(members, changeRatio);
  const needed = plans.filter((p) => p.human !== p.holdsRole);

  const counter = statusCounter();
  progress(`gating: seeding ${formatNumber(members)} members (client limiter ${clientRps}/s)`);
  return withBenchWorld(
    {
      plans,
      upstreamRps,
      clientRps,
      credentialsOf: (plan) => gatingCredentials(plan.identity, { human: plan.human }),
      transportLogger: counter.logger,
    },
    async ({ discord, upstream, guild, humanRoleId, service }) => {
      const human = { id: humanRoleId };
      discord.limitRoleEdits(guild.id, discordRps);
      const upstreamBefore = upstream.requests.length;
      const discordBefore = discord.requests.length;

      progress(
        `gating: re-checking (floor ${formatNumber(floorSeconds(members, needed.length, upstreamRps, discordRps))} s)`,
      );
      const started = performance.now();
      const result = await service.guilds.recheckGuild(guild.id, { cause: 'bench' });
      await service.idle(guild.id);
      const wallSeconds = (performance.now() - started) / 1_000;

      const edits = discord.requests
        .slice(discordBefore)
        .filter((r) => (r.method === 'PUT' || r.method === 'DELETE') && r.path.includes('/roles/'));
      const applied = edits.filter((r) => r.status < 300);
      const expectedPaths = new Set(
        needed.map(
          (p) => `${p.human ? 'PUT' : 'DELETE'} /guilds/${guild.id}/members/${p.userId}/roles/${human.id}`,
        ),
      );
      const onlyNeeded =
        applied.length === needed.length && applied.every((r) => expectedPaths.has(`${r.method} ${r.path}`));
      const rightState = plans.every(
        (p) => guild.members.get(p.userId)?.roles.includes(human.id) === p.human,
      );
      const upstream429 = counter.statuses.get(429) ?? 0;
      const discord429 = edits.filter((r) => r.status === 429).length;
      const floor = floorSeconds(members, needed.length, upstreamRps, discordRps);
      const pass =
        upstream429 === 0 &&
        discord429 === 0 &&
        onlyNeeded &&
        rightState &&
        result.failures === 0 &&
        wallSeconds <= WALL_TARGET * floor;

      const share =
        clientRps === upstreamRps
          ? '= upstream'
          : `${formatNumber((clientRps / upstreamRps) * 100, 0)}% of upstream`;
      return {
        'Client limiter': `${formatNumber(clientRps)}/s (${share})`,
        Members: members,
        'Upstream requests': upstream.requests.length - upstreamBefore,
        'Upstream 429s': upstream429,
        'Role edits made / needed': `${formatNumber(applied.length)} / ${formatNumber(needed.length)}${onlyNeeded ? '' : ' (wrong set)'}`,
        'Discord 429s': discord429,
        'Wall (s)': formatNumber(wallSeconds, 1),
        'Floor (s)': formatNumber(floor, 1),
        'Ratio to floor': formatRatio(wallSeconds, floor),
        'Lookup failures': result.failures,
        Result: verdict(pass),
      };
    },
  );
}

export interface StormBenchOptions {
  /** Linked members, every one holding the human role earned earlier; default 10,000 (quick: 1,000). */
  members?: number;
  /** Share of members whose identity Web3.bio suddenly answers "not found" for; default 0.3. */
  notFoundShare?: number;
  /** The stand-in's limit and the client limiter, requests per second; default 2,000. */
  upstreamRps?: number;
  quick?: boolean;
  progress?: (line: string) => void;
}

/**
 * Issue #7: an upstream incident during the periodic pass. Every member holds the human role earned
 * from a credential seen before; Web3.bio now answers "not found" for a share of them. Two passes an
 * hour apart (the confirmation window): nothing may be removed, and the breaker alert is posted once.
 */
export async function runGatingStormBench(opts: StormBenchOptions = {}): Promise<Row[]> {
  const members = opts.members ?? (opts.quick ? 1_000 : 10_000);
  const share = opts.notFoundShare ?? 0.3;
  const upstreamRps = opts.upstreamRps ?? 2_000;
  const progress = opts.progress ?? (() => {});
  const every = Math.round(1 / share);
  const plans = planMembers(members, 0).map((plan, i) => ({
    ...plan,
    human: true,
    holdsRole: true,
    gone: i % 10 < Math.round(share * 10),
  }));
  const rows: Row[] = [];
  let offset = 0;
  progress(`gating storm: seeding ${formatNumber(members)} members, 1 in ${every} answered "not found"`);
  return withBenchWorld(
    {
      plans,
      upstreamRps,
      clientRps: upstreamRps,
      credentialsOf: (plan) => (plan.gone ? null : gatingCredentials(plan.identity, { human: true })),
      logChannel: true,
      now: () => Date.now() + offset,
    },
    async ({ discord, guild, humanRoleId, service }) => {
      const human = { id: humanRoleId };
      const alerts = () =>
        [...discord.state.messages.values()].filter(
          (m) => m.channel_id === guild.textChannelId && m.content.includes('Held back'),
        ).length;
      const removals = () =>
        discord.requests.filter((r) => r.method === 'DELETE' && r.path.includes('/roles/')).length;
      for (const pass of [1, 2]) {
        progress(`gating storm: pass ${pass}`);
        const started = performance.now();
        const result = await service.guilds.recheckGuild(guild.id, { fresh: true, cause: 'periodic' });
        await service.idle(guild.id);
        const wallSeconds = (performance.now() - started) / 1_000;
        const stillHeld = plans.filter((p) => guild.members.get(p.userId)?.roles.includes(human.id)).length;
        const pass_ = removals() === 0 && stillHeld === members && alerts() === 1;
        rows.push({
          Pass: pass === 1 ? '1 (incident starts)' : '2 (an hour later, still on)',
          Members: members,
          '"Not found" answers': plans.filter((p) => p.gone).length,
          'Losses seen': result.pendingRemovals + result.heldRemovals,
          'Held by breaker': result.heldRemovals,
          'Roles removed': removals(),
          'Members still holding the role': stillHeld,
          'Breaker alerts posted (total)': alerts(),
          'Wall (s)': formatNumber(wallSeconds, 1),
          Result: verdict(pass_),
        });
        offset += 61 * 60_000;
      }
      return rows;
    },
  );
}

/** The storm rows as a table. */
export function stormTable(rows: Row[], options: StormBenchOptions): BenchTable {
  const columns = Object.keys(rows[0] ?? {});
  return {
    suite:
      'Gating re-check during an upstream incident: Web3.bio answers "not found" for known identities (issue #7)',
    method: `two whole-guild passes 61 minutes apart (past GATING_CONFIRM_MINUTES=60); every member holds the human role earned from a credential seen before; ${formatNumber((options.notFoundShare ?? 0.3) * 100, 0)}% of identities now answer 404 "Not Found"; stand-in Web3.bio and client limiter at ${formatNumber(options.upstreamRps ?? 2_000)} requests/s`,
    targets: ['0 roles removed', 'breaker alert posted once'],
    columns,
    rows: rows.map((row) => columns.map((column) => row[column] ?? '')),
    notes: [
      'A "not found" for an identity whose credentials were seen before is noted as a possible loss but can never confirm one; the breaker holds the pass because its losses exceed 10% of the role\'s holders.',
      'The second pass sees the same losses, already held: no new alert, and still nothing removed.',
    ],
  };
}

export interface SharedRecheckOptions {
  /** Linked members; default 10,000 (quick: 1,000). */
  members?: number;
  /** The stand-in's limit and each process's limiter, requests per second; default 2,000. */
  upstreamRps?: number;
  /** Share of members needing a change; default 0.05. */
  changeRatio?: number;
  /** PostgreSQL the two processes share (a schema of their own is made and dropped). */
  postgresUrl?: string;
  quick?: boolean;
  progress?: (line: string) => void;
}

/**
 * Issue #9: two bot processes on one PostgreSQL both decide to re-check the same guild (two periodic
 * ticks at once). The guild lease lets one walk it: every member is checked once, every change made once.
 */
export async function runSharedRecheckBench(opts: SharedRecheckOptions = {}): Promise<Row[]> {
  const members = opts.members ?? (opts.quick ? 1_000 : 10_000);
  const upstreamRps = opts.upstreamRps ?? 2_000;
  const url = opts.postgresUrl ?? 'postgres://postgres@127.0.0.1:5432/test';
  const plans = planMembers(members, opts.changeRatio ?? 0.05);
  const needed = plans.filter((p) => p.human !== p.holdsRole).length;
  const schema = `bench_recheck_${process.pid}_${Date.now().toString(36)}`;
  const admin = new pg.Pool({ connectionString: url, max: 1 });
  await admin.query(`CREATE SCHEMA ${schema}`);
  try {
    opts.progress?.(`gating: two processes on one PostgreSQL, ${formatNumber(members)} members`);
    return await withBenchWorld(
      {
        plans,
        upstreamRps,
        clientRps: upstreamRps,
        credentialsOf: (plan) => gatingCredentials(plan.identity, { human: plan.human }),
        processes: 2,
        openStore: () => openPostgresStore(url, { schema }),
      },
      async ({ discord, upstream, services }) => {
        const credentialLookups = () =>
          upstream.requests.filter((r) => r.path.startsWith('/credential/')).length;
        const before = credentialLookups();
        const started = performance.now();
        const results = await Promise.all(
          services.map((s) =>
            s.guilds.recheckGuild(discord.state.guilds.keys().next().value ?? '', { cause: 'periodic' }),
          ),
        );
        await Promise.all(services.map((s) => s.idle()));
        const wallSeconds = (performance.now() - started) / 1_000;
        const lookups = credentialLookups() - before;
        const edits = discord.requests.filter(
          (r) =>
            (r.method === 'PUT' || r.method === 'DELETE') && r.path.includes('/roles/') && r.status < 300,
        ).length;
        const walked = results.filter((r) => !r.elsewhere).length;
        return [
          {
            Processes: services.length,
            Members: members,
            'Processes that walked the guild': walked,
            'Credential lookups': lookups,
            'Lookups per member': formatNumber(lookups / members, 2),
            'Role edits made / needed': `${formatNumber(edits)} / ${formatNumber(needed)}`,
            'Wall (s)': formatNumber(wallSeconds, 1),
            Result: verdict(walked === 1 && lookups === members && edits === needed),
          },
        ];
      },
    );
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  }
}

/** The shared re-check row as a table. */
export function sharedRecheckTable(rows: Row[], options: SharedRecheckOptions): BenchTable {
  const columns = Object.keys(rows[0] ?? {});
  return {
    suite: 'Re-check: two processes on one PostgreSQL, one guild (issue #9)',
    method: `both processes start a whole-guild pass at once (two periodic ticks), each with its own Discord and Web3.bio client and its own PostgreSQL pool; stand-in Web3.bio and each limiter at ${formatNumber(options.upstreamRps ?? 2_000)} requests/s; ${formatNumber((options.changeRatio ?? 0.05) * 100, 0)}% of members need a change`,
    targets: ['each member checked once per pass', 'each change made once'],
    columns,
    rows: rows.map((row) => columns.map((column) => row[column] ?? '')),
    notes: [
      'The guild lease (a row in the store, renewed while the pass runs, taken over once it lapses) lets one process walk the guild; the other sees it taken and skips.',
    ],
  };
}

/** The time the two limits alone impose when lookups and edits overlap (as the service does). */
export function floorSeconds(
  members: number,
  changes: number,
  upstreamRps: number,
  discordRps: number,
): number {
  return Math.max(members / upstreamRps, changes / discordRps);
}

/** `--members 10000 --upstream-rps 500 --discord-rps 50 --change-ratio 0.05 [--client-rps N]... [--quick]`. */
export function parseGatingArgs(argv: readonly string[]): GatingBenchOptions {
  const options: GatingBenchOptions = {};
  const number = (flag: string, value: string | undefined): number => {
    const parsed = Number(value);
    if (value === undefined || !Number.isFinite(parsed) || parsed <= 0) {
      throw new Error(`${flag} needs a positive number`);
    }
    return parsed;
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i] ?? '';
    if (flag === '--quick') options.quick = true;
    else if (flag === '--members') options.members = Math.floor(number(flag, argv[++i]));
    else if (flag === '--upstream-rps') options.upstreamRps = number(flag, argv[++i]);
    else if (flag === '--discord-rps') options.discordRps = number(flag, argv[++i]);
    else if (flag === '--client-rps')
      options.clientRps = [...(options.clientRps ?? []), number(flag, argv[++i])];
    else if (flag === '--change-ratio') {
      const ratio = number(flag, argv[++i]);
      if (ratio > 1) throw new Error('--change-ratio is a share between 0 and 1');
      options.changeRatio = ratio;
    } else throw new Error(`unknown option ${flag}`);
  }
  return options;
}

/** The rows as the markdown table every benchmark prints. */
export function gatingTable(rows: Row[], options: GatingBenchOptions): BenchTable {
  const columns = Object.keys(rows[0] ?? {});
  return {
    suite: 'Gating re-check under upstream and Discord rate limits (issue #4)',
    method: `one run per row; stand-in Web3.bio limited to ${options.upstreamRps ?? 500} requests/s, stand-in Discord to ${options.discordRps ?? 50} role edits/s in the guild, ${(options.changeRatio ?? 0.05) * 100}% of members needing a change`,
    targets: ['no avoidable 429s', 'role edits only where needed', `wall ≤ ${WALL_TARGET}× floor`],
    columns,
    rows: rows.map((row) => columns.map((column) => row[column] ?? '')),
    notes: [
      'Floor = max(members / upstream rate, changes / role-edit rate): the service queues changes during the walk and the role worker applies them meanwhile, so the two limits overlap rather than add up.',
      'Wall time covers the member-list fetch over the gateway, every credential lookup, the store writes and every role edit until the queue is empty.',
      'The client limiter is set to exactly the upstream rate: it counts each request until a window after its answer (the upstream counts on arrival, which comes first), so uneven arrival delays cannot push a window at the upstream over the limit.',
      'The floor counts the first window too; the limiter may send its first full window at once, so a run can finish slightly under it.',
      'Role-edit 429s: discord.js reads X-RateLimit-Remaining/Reset-After and waits before the limit, so it never meets one.',
    ],
  };
}

if (import.meta.main) {
  let options: GatingBenchOptions;
  try {
    options = parseGatingArgs(process.argv.slice(2));
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    process.exit(2);
  }
  const rows = await runGatingBench({ ...options, progress: (line) => console.error(`… ${line}`) });
  console.log(renderTable(gatingTable(rows, options), machineLine()));
}
