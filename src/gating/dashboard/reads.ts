/**
 * What the dashboard's pages read from the shared store alone, in whichever process serves the page:
 * the overview's counts, setup, rules, daily series and upstream health; the audit page (filtered keyset
 * pages) and its CSV rows, page by page. Every read is an indexed lookup or an aggregate of at most a
 * few hundred rows (audit_daily, upstream_minutes): none scans the audit events of a period.
 */
import { DAY_MS } from '../../store/auditMetric.ts';
import type {
  AuditCursor,
  AuditEvent,
  AuditFilter,
  GatingStore,
  GuildSettings,
  UpstreamSample,
} from '../../store/types.ts';
import type { RoleRule } from '../rules/roleRules.ts';
import { loadRoleRules } from '../rules/ruleReads.ts';

/** The charts' series: role grants and removals, new proofs, flags, re-check passes, breaker holds. */
export const CHART_METRICS = [
  'role_added',
  'role_removed',
  'linked',
  'flag_added',
  'recheck_pass',
  'removals_held',
] as const;
export type ChartMetric = (typeof CHART_METRICS)[number];

/** The periods the charts cover. */
export const CHART_DAYS = [30, 90] as const;
export type ChartDays = (typeof CHART_DAYS)[number];

export type DashboardReadStore = Pick<
  GatingStore,
  | 'getGuildSettings'
  | 'listRuleConditions'
  | 'countLinkedUsers'
  | 'countPendingLosses'
  | 'pendingRoleChanges'
  | 'latestAuditEvent'
  | 'countAuditDaily'
  | 'upstreamSince'
  | 'filterAuditEvents'
>;

/** The last whole-server pass: when, how many members it evaluated, and the holders it counted. */
export interface LastPass {
  at: number;
  members: number;
  /** Null when the pass had no member list (no GuildMembers intent, or its fetch failed). */
  holders: { human: number; flagged: number } | null;
}

export interface Overview {
  settings: GuildSettings | null;
  rules: RoleRule[];
  /** Members with at least one active link. */
  linked: number;
  losses: { pending: number; held: number };
  /** Role changes queued and not done yet. */
  queued: number;
  lastPass: LastPass | null;
  days: ChartDays;
  /** The first day of the series (whole UTC days since the epoch); each series has `days` values. */
  firstDay: number;
  series: Record<ChartMetric, number[]>;
  upstream: { lastHour: UpstreamSample; lastDay: UpstreamSample };
}

const MINUTE_MS = 60_000;
/** How long a guild's count of linked members is reused: counting them reads every member's links. */
export const LINKED_COUNT_TTL_MS = 30_000;
const LINKED_COUNT_ENTRIES = 1_000;

/**
 * The guilds' counts of linked members, reused for LINKED_COUNT_TTL_MS: the one overview read that grows
 * with the server (a distinct count over its links: about 20 ms for 100,000 members on PostgreSQL here),
 * where every other read is an index lookup or a few hundred rows. A cache of the process that serves
 * the page, kept by its caller; at most LINKED_COUNT_ENTRIES guilds.
 */
export class LinkedCounts {
  readonly #counts = new Map<string, { count: number; at: number }>();

  async get(
    store: Pick<DashboardReadStore, 'countLinkedUsers'>,
    guildId: string,
    now: number,
  ): Promise<number> {
    const known = this.#counts.get(guildId);
    if (known && now - known.at < LINKED_COUNT_TTL_MS && known.at <= now) return known.count;
    const count = await store.countLinkedUsers(guildId);
    this.#counts.delete(guildId);
    if (this.#counts.size >= LINKED_COUNT_ENTRIES) {
      const oldest = this.#counts.keys().next().value;
      if (oldest !== undefined) this.#counts.delete(oldest);
    }
    this.#counts.set(guildId, { count, at: now });
    return count;
  }
}

/** The overview of one guild, from the store (the linked count through `linkedCounts` when given). */
export async function readOverview(
  store: DashboardReadStore,
  guildId: string,
  o: { now: number; days: ChartDays; linkedCounts?: LinkedCounts },
): Promise<Overview> {
  const today = Math.floor(o.now / DAY_MS);
  const firstDay = today - o.days + 1;
  const minute = Math.floor(o.now / MINUTE_MS);
  const [settings, rules, linked, losses, queued, pass, counts, lastHour, lastDay] = await Promise.all([
    store.getGuildSettings(guildId),
    loadRoleRules(store, guildId),
    o.linkedCounts ? o.linkedCounts.get(store, guildId, o.now) : store.countLinkedUsers(guildId),
    store.countPendingLosses(guildId),
    store.pendingRoleChanges(guildId),
    store.latestAuditEvent(guildId, 'recheck_pass'),
    store.countAuditDaily(guildId, CHART_METRICS, firstDay),
    store.upstreamSince(minute - 59),
    store.upstreamSince(minute - 24 * 60 + 1),
  ]);
  const series = Object.fromEntries(
    CHART_METRICS.map((m) => [m, new Array<number>(o.days).fill(0)]),
  ) as Record<ChartMetric, number[]>;
  for (const { metric, day, count } of counts) {
    const values = series[metric as ChartMetric];
    const index = day - firstDay;
    if (values && index >= 0 && index < o.days) values[index] = count;
  }
  return {
    settings: settings ?? null,
    rules,
    linked,
    losses,
    queued,
    lastPass: pass ? lastPassOf(pass) : null,
    days: o.days,
    firstDay,
    series,
    upstream: { lastHour, lastDay },
  };
}

function lastPassOf(event: AuditEvent): LastPass {
  const details = typeof event.details === 'object' && event.details !== null ? event.details : {};
  const record = details as Record<string, unknown>;
  const holders = record.holders as Record<string, unknown> | undefined;
  return {
    at: event.createdAt,
    members: typeof record.members === 'number' ? record.members : 0,
    holders:
      holders && typeof holders.human === 'number' && typeof holders.flagged === 'number'
        ? { human: holders.human, flagged: holders.flagged }
        : null,
  };
}

/** One page of the audit trail, with the cursors of the pages around it (none where there is none). */
export interface AuditPage {
  events: AuditEvent[];
  /** The next page back in time. */
  older: AuditCursor | null;
  /** The page before this one (newer events). */
  newer: AuditCursor | null;
}

export const AUDIT_PAGE_SIZE = 50;

/** A page of the filtered audit trail, newest first: the first, or the one before or after a cursor. */
export async function readAuditPage(
  store: Pick<GatingStore, 'filterAuditEvents'>,
  filter: AuditFilter,
  at: { before?: AuditCursor; after?: AuditCursor },
  limit = AUDIT_PAGE_SIZE,
): Promise<AuditPage> {
  const cursorOf = (e: AuditEvent | undefined): AuditCursor | null =>
    e ? { createdAt: e.createdAt, id: e.id } : null;
  if (at.after) {
    const found = await store.filterAuditEvents({ ...filter, after: at.after, limit: limit + 1 });
    const more = found.length > limit;
    const events = more ? found.slice(1) : found;
    return { events, older: cursorOf(events.at(-1)), newer: more ? cursorOf(events[0]) : null };
  }
  const found = await store.filterAuditEvents({
    ...filter,
    ...(at.before ? { before: at.before } : {}),
    limit: limit + 1,
  });
  const events = found.slice(0, limit);
  return {
    events,
    older: found.length > limit ? cursorOf(events.at(-1)) : null,
    newer: at.before ? cursorOf(events[0]) : null,
  };
}

/** Every event the filter selects, oldest first, read page by page (the CSV download streams these). */
export async function* auditEventsOldestFirst(
  store: Pick<GatingStore, 'filterAuditEvents'>,
  filter: AuditFilter,
  pageSize = 500,
): AsyncIterable<AuditEvent> {
  let after: AuditCursor | undefined;
  for (;;) {
    const page = await store.filterAuditEvents({
      ...filter,
      oldestFirst: true,
      limit: pageSize,
      ...(after ? { after } : {}),
    });
    yield* page;
    const last = page.at(-1);
    if (!last || page.length < pageSize) return;
    after = { createdAt: last.createdAt, id: last.id };
  }
}
