/**
 * A walk over every linked member of a guild: page by page, a few members at a time, with the record
 * proofs of each page re-checked in one batched lookup.
 */
import type { Client, Guild } from 'discord.js';
import type { Logger } from '../../ops/log.ts';
import type { IdentityCheck } from '../../store/recheckCycleTypes.ts';
import type { GatingStore, LinkRecord, RoleChange } from '../../store/types.ts';
import { SlidingWindowLimiter } from '../../web3bio/rateLimiter.ts';
import {
  loadMembers,
  MEMBER_LIST_PAGES_PER_SECOND,
  type MemberRoster,
  memberOf,
  memberState,
} from '../roles/discordReads.ts';
import type { EvaluateOptions, Evaluation, Evaluator, MemberState } from '../rules/evaluation.ts';
import { holdingsBatch } from '../rules/holdingFacts.ts';
import type { BackgroundTasks } from './backgroundTasks.ts';

const LINK_PAGE = 500;

export interface WalkSnapshot {
  queued: ReadonlyMap<string, readonly RoleChange[]>;
  roster: MemberRoster | null;
}

export interface GuildWalkOptions {
  store: GatingStore;
  discord: Client;
  logger: Logger;
  evaluator: Evaluator;
  /** The walk stops early once these are stopping. */
  tasks: BackgroundTasks;
  /** Members evaluated at once. */
  concurrency: number;
  /**
   * Member-list pages a second this process may request. Discord's REST limit is per bot, so with shards
   * in several processes each gets its share. Default MEMBER_LIST_PAGES_PER_SECOND.
   */
  pagesPerSecond?: number | undefined;
}

/** Evaluates each linked member of a guild and hands the evaluation on. */
export class GuildWalk {
  readonly #o: GuildWalkOptions;
  /** Paces member-list pages, so a pass over many guilds leaves REST room for replies and role edits. */
  readonly #pages: SlidingWindowLimiter;

  constructor(options: GuildWalkOptions) {
    this.#o = { ...options, concurrency: Math.max(1, options.concurrency) };
    const requests = Math.max(1, Math.floor(options.pagesPerSecond ?? MEMBER_LIST_PAGES_PER_SECOND));
    this.#pages = new SlidingWindowLimiter({ requests, intervalMs: 1_000 });
  }

  /**
   * What a walk reads of the guild: its queued role changes, then its member list (one gateway request;
   * null when it cannot be had). In that order, a change the worker finishes in between is either still
   * queued or already on the members Discord lists, never missing from both.
   */
  async snapshot(guild: Guild): Promise<WalkSnapshot> {
    const queued = groupByUser(await this.#o.store.openRoleChanges(guild.id));
    const roster = await loadMembers(this.#o.discord, guild, this.#o.logger, this.#pages);
    return { queued, roster };
  }

  /**
   * Every linked member of the guild, page by page, a few at a time; record proofs of each page are
   * re-checked with one batched lookup per 30 identities. Members come from the snapshot's roster,
   * else one request each. False when the walk was cut short.
   */
  async walk(
    guild: Guild,
    { queued, roster }: WalkSnapshot,
    o: EvaluateOptions,
    onMember: (state: MemberState, evaluation: Evaluation) => Promise<void>,
    onError: (userId: string) => void,
  ): Promise<boolean> {
    const { store, logger, evaluator, tasks, concurrency } = this.#o;
    let afterUserId: string | undefined;
    for (;;) {
      if (tasks.stopping) return false;
      const page = await store.listLinks(guild.id, {
        limit: LINK_PAGE,
        ...(afterUserId ? { afterUserId } : {}),
      });
      if (page.length === 0) return true;
      const groups = groupByUser(page);
      afterUserId = [...groups.keys()].at(-1);
      const batch = o.checkRecords ? evaluator.batchRecords(page, o.fresh) : undefined;
      // Keep an unhandled rejection from firing before the first member awaits the batch.
      batch?.catch(() => undefined);
      // Every balance the page's members need for holdings rules, in one read per chain (issue #35).
      const holdings = holdingsBatch(evaluator.holdings, o.roleRules, page, o.fresh, o.cycle?.startedAt);
      const pageOptions = {
        ...o,
        ...(batch ? { batch } : {}),
        ...(holdings ? { holdingsBatch: holdings } : {}),
        ...(o.cycle ? { cycle: { ...o.cycle, checks: this.#cycleChecks(page, o.cycle.startedAt) } } : {}),
      };
      await eachLimit([...groups], concurrency, async ([userId, links]) => {
        if (tasks.stopping) return;
        try {
          const member = roster ? roster.get(userId) : await memberOf(guild, userId);
          if (!member) return;
          const state = memberState(userId, member, queued.get(userId));
          await onMember(state, await evaluator.evaluate(state, links, pageOptions));
        } catch (error) {
          logger.warn({ err: error, guildId: guild.id, userId }, 'member re-check failed');
          onError(userId);
        }
      });
    }
  }

  /** The page's identities read in this cycle by any server's pass (issue #37): none is read again. */
  #cycleChecks(page: readonly LinkRecord[], since: number): Promise<Map<string, IdentityCheck>> {
    const checks = this.#o.store.identityChecksSince(
      page.map((l) => l.identity),
      since,
    );
    return checks.catch((error: unknown) => {
      this.#o.logger.warn({ err: error }, "could not read the cycle's checks: the page reads its own");
      return new Map();
    });
  }
}

function groupByUser<T extends { userId: string }>(items: readonly T[]): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const list = groups.get(item.userId) ?? [];
    list.push(item);
    groups.set(item.userId, list);
  }
  return groups;
}

async function eachLimit<T>(
  items: readonly T[],
  limit: number,
  run: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lane = async () => {
    for (;;) {
      const item = items[next];
      next += 1;
      if (item === undefined) return;
      await run(item);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
}
