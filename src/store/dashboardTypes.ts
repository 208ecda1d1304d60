/**
 * What the owners' dashboard reads and writes (migration 17): the daily counts its charts draw (kept by
 * every audit insert, never computed from the events per request), the audit page's filtered keyset
 * pages, the upstream's health by minute, and the requests a page hands to the process that owns a guild
 * (the gateway's guild state: dry runs, Apply, held removals, health), claimed under a lease like the
 * other store-backed queues.
 */

import type { AuditEvent, PendingLoss } from './auditTypes.ts';
import type { JsonValue } from './proofTypes.ts';

/** One day's count of one metric (an audit kind, or `flag_added`: the spam or risky role given). */
export interface DailyCount {
  metric: string;
  /** Whole UTC days since the epoch. */
  day: number;
  count: number;
}

/** Where an audit page starts: the event just past it, in the page's order. */
export interface AuditCursor {
  createdAt: number;
  id: number;
}

/** A guild's audit events, narrowed; every field but `guildId` optional. */
export interface AuditFilter {
  guildId: string;
  userId?: string;
  roleId?: string;
  kind?: string;
  /** Events created at or after this time (ms). */
  from?: number;
  /** Events created before this time (ms). */
  to?: number;
}

export interface FilteredAuditQuery extends AuditFilter {
  /** Newest first, the events older than this one. */
  before?: AuditCursor;
  /** The events just newer than this one (still returned newest first). */
  after?: AuditCursor;
  /** Default 50, at most 500. */
  limit?: number;
  /** Oldest first instead (the CSV download); `after` then pages forwards. */
  oldestFirst?: boolean;
}

/** Web3.bio as one minute of the bot's own metrics saw it (every process adds its share). */
export interface UpstreamSample {
  requests: number;
  /** 5xx, 429, timeouts and network failures. */
  errors: number;
  /** Seconds spent on the requests, summed. */
  seconds: number;
  /** Requests slower than a second. */
  slow: number;
}

/** A dashboard request as the owning process claims it. */
export interface ClaimedDashboardRequest {
  id: string;
  guildId: string;
  request: JsonValue;
  createdAt: number;
  attempts: number;
  claimToken: string;
}

/** Which guilds a claiming process serves: `(guild_id >> 22) % count` in `ids`; null for every guild. */
export interface ShardFilter {
  ids: readonly number[];
  count: number;
}

export interface DashboardStore {
  /** Daily counts of these metrics from `sinceDay` on, for one guild, by metric then day. */
  countAuditDaily(guildId: string, metrics: readonly string[], sinceDay: number): Promise<DailyCount[]>;
  /** The guild's latest event of one kind. */
  latestAuditEvent(guildId: string, kind: string): Promise<AuditEvent | undefined>;
  /** One page of the guild's audit events as filtered (keyset paging: any page as fast as the first). */
  filterAuditEvents(query: FilteredAuditQuery): Promise<AuditEvent[]>;
  /** The guild's pending losses, and how many of them the breaker holds. */
  countPendingLosses(guildId: string): Promise<{ pending: number; held: number }>;
  /** Forget the guild's held losses (a moderator kept the roles); returns how many. */
  clearHeldLosses(guildId: string): Promise<number>;
  /** The guild's held losses, latest hold first, at most `limit`. */
  listHeldLosses(guildId: string, limit: number): Promise<PendingLoss[]>;
  /** The channels where the guild's verify panels were posted. */
  listVerifyPanels(guildId: string): Promise<{ channelId: string; messageId: string }[]>;

  /** Add one process's minute of upstream requests to the minute (ms since epoch / 60,000). */
  addUpstreamMinute(minute: number, sample: UpstreamSample): Promise<void>;
  /** Every process's upstream requests from `sinceMinute` on, summed. */
  upstreamSince(sinceMinute: number): Promise<UpstreamSample>;
  /** Delete minutes before `beforeMinute`; returns how many. */
  deleteUpstreamMinutes(beforeMinute: number): Promise<number>;

  /** Queue a request for the process that owns the guild. */
  enqueueDashboardRequest(input: { id: string; guildId: string; request: JsonValue }): Promise<void>;
  /**
   * Claim up to `limit` open requests (never claimed, or under a lapsed lease) of the guilds `shards`
   * selects, created after `createdAfter`, oldest first, each under the store's lease.
   */
  claimDashboardRequests(
    shards: ShardFilter | null,
    limit: number,
    createdAfter: number,
  ): Promise<ClaimedDashboardRequest[]>;
  /** Extend a claim's lease while its work runs; false when the claim is no longer held. */
  renewDashboardRequest(id: string, claimToken: string): Promise<boolean>;
  /** Record the answer; false when the claim had lapsed to another process. */
  finishDashboardRequest(id: string, claimToken: string, result: JsonValue): Promise<boolean>;
  /** The answer once there is one; null while waiting; undefined when the request is unknown. */
  dashboardRequestResult(id: string): Promise<JsonValue | null | undefined>;
  /** Delete requests created before `before` (answered or not); returns how many. */
  deleteDashboardRequests(before: number): Promise<number>;
}
