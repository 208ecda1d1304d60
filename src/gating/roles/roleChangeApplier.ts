/**
 * Applies one claimed role change through discord.js: refuses (before any request) what the cache shows
 * the bot may not do, renews the claim while the edit is in flight, completes it only as the claim's
 * holder, and turns Discord's refusals into a failed change, a retry, or a block of the role.
 */
import { type Client, DiscordAPIError, type Guild, type GuildMember } from 'discord.js';
import type { Logger } from '../../ops/log.ts';
import type { GatingStore, RoleChange } from '../../store/types.ts';
import { truncate } from '../../text/safety.ts';
import { exemptionOf } from '../rules/exemptions.ts';
import type { RoleRefusal } from '../types.ts';
import {
  DISCORD_ERROR,
  delay,
  discordErrorCode,
  guildOf,
  guildRoleProblems,
  memberOf,
} from './discordReads.ts';
import type { RoleProblem } from './hierarchy.ts';
import type { GuildNotices } from './logChannel.ts';
import type { RoleBlocks } from './roleBlocks.ts';

/** Prefix of every audit-log reason the gating module writes. */
export const REASON_PREFIX = 'web3 gating: ';
/** A change claimed this many times without finishing (crashes, lapsed leases) is given up on. */
export const MAX_CLAIMS = 5;

type Finish = (outcome: 'done' | 'failed', detail?: string) => Promise<boolean>;

export interface RoleChangeApplierOptions {
  store: GatingStore;
  discord: Client;
  logger: Logger;
  notices: GuildNotices;
  blocks: RoleBlocks;
  /** A probe of a blocked role worked: send the guild's waiting changes. */
  onUnblocked: (guildId: string) => Promise<void>;
  isStopping: () => boolean;
  maxAttempts: number;
  backoffMs: number;
  leaseMs: number;
  now: () => number;
}

export class RoleChangeApplier {
  readonly #o: RoleChangeApplierOptions;
  readonly #renewMs: number;

  constructor(options: RoleChangeApplierOptions) {
    this.#o = { ...options, maxAttempts: Math.max(1, options.maxAttempts) };
    this.#renewMs = Math.max(10, Math.floor(options.leaseMs / 3));
  }

  async apply(change: RoleChange): Promise<void> {
    const token = change.claimToken ?? '';
    const finish = async (outcome: 'done' | 'failed', detail?: string) => {
      const completed = await this.#o.store.completeRoleChange(change.id, token, outcome, detail);
      if (!completed) {
        this.#o.logger.warn({ changeId: change.id }, 'role change taken over by another worker');
      }
      return completed;
    };
    if (change.attempts > MAX_CLAIMS) {
      await finish('failed', `gave up after ${change.attempts - 1} claims that never finished`);
      this.#o.notices.post(change.guildId, { kind: 'role_given_up', change, claims: change.attempts - 1 });
      return;
    }
    const guild = await guildOf(this.#o.discord, change.guildId);
    if (!guild) return void (await finish('failed', 'the bot is no longer in this server'));

    const waitUntil = this.#o.blocks.waitUntil(change.guildId, change.roleId);
    if (waitUntil !== null) {
      await this.#o.store.deferRoleChange(change.id, token, waitUntil);
      return;
    }
    const probing = this.#o.blocks.isBlocked(change.guildId, change.roleId);
    const problem = guildRoleProblems(guild, [change.roleId])[0];
    if (problem) return this.#refuse(change, finish, problem);

    const renewal = this.#keepLease(change);
    try {
      for (let attempt = 1; ; attempt += 1) {
        try {
          const member = await memberOf(guild, change.userId);
          if (!member) return void (await finish('failed', 'unknown member: they left the server'));
          if (member.roles.cache.has(change.roleId) === (change.op === 'add')) {
            await finish('done', change.op === 'add' ? 'already had the role' : 'already without the role');
            return;
          }
          // A removal queued before an exemption was added: the exemption holds it here too.
          if (change.op === 'remove' && (await this.#exempt(change.guildId, member))) {
            await finish('done', 'kept: the member is exempt from gating removals');
            return;
          }
          // A claim that lapsed meanwhile belongs to another worker now: it decides.
          if (!(await this.#o.store.renewRoleChange(change.id, token))) return;
          const edit = { user: change.userId, role: change.roleId, reason: change.reason };
          if (change.op === 'add') await guild.members.addRole(edit);
          else await guild.members.removeRole(edit);
          if (probing) await this.#o.onUnblocked(change.guildId);
          if (await finish('done')) this.#o.notices.post(change.guildId, { kind: 'role_changed', change });
          return;
        } catch (error) {
          if (await this.#settleError(change, guild, error, attempt, finish)) return;
          await delay(this.#o.backoffMs * 2 ** (attempt - 1));
        }
      }
    } finally {
      clearInterval(renewal);
    }
  }

  async #exempt(guildId: string, member: GuildMember): Promise<boolean> {
    const exemptions = await this.#o.store.listExemptions(guildId);
    return (
      exemptionOf({ userId: member.id, roleIds: new Set(member.roles.cache.keys()) }, exemptions) !== null
    );
  }

  /** Renew the claim while the edit is in flight, so no other worker takes it over meanwhile. */
  #keepLease(change: RoleChange): NodeJS.Timeout {
    const timer = setInterval(() => {
      this.#o.store
        .renewRoleChange(change.id, change.claimToken ?? '')
        .catch((error: unknown) =>
          this.#o.logger.warn({ err: error }, 'could not renew a role-change lease'),
        );
    }, this.#renewMs);
    timer.unref();
    return timer;
  }

  /** True when the error ended the change (finished or deferred); false to retry. */
  async #settleError(
    change: RoleChange,
    guild: Guild,
    error: unknown,
    attempt: number,
    finish: Finish,
  ): Promise<boolean> {
    const code = discordErrorCode(error);
    if (code === DISCORD_ERROR.missingPermissions || code === DISCORD_ERROR.unknownAccess) {
      const roleName = guild.roles.cache.get(change.roleId)?.name ?? null;
      await this.#block(change, { problem: 'missing_permissions', roleName });
      return true;
    }
    if (code === DISCORD_ERROR.unknownMember) {
      await finish('failed', 'unknown member: they left the server');
      return true;
    }
    if (code === DISCORD_ERROR.unknownRole) {
      await finish('failed', 'unknown role: it was deleted');
      this.#warn(change, { problem: 'unknown_role' });
      return true;
    }
    const clientError = error instanceof DiscordAPIError && error.status < 500;
    if (!clientError && attempt < this.#o.maxAttempts && !this.#o.isStopping()) return false;
    this.#o.logger.warn({ err: error, changeId: change.id, attempt }, 'role change failed');
    // Stopping mid-retry leaves the change claimed: its lease lapses and the next start retries it.
    if (!clientError && this.#o.isStopping() && attempt < this.#o.maxAttempts) return true;
    await finish('failed', `gave up after ${attempt} attempt(s): ${errorText(error)}`);
    return true;
  }

  /** A problem seen in the gateway cache: wait (blocked) when an admin can fix it, else fail and say why. */
  async #refuse(change: RoleChange, finish: Finish, problem: RoleProblem): Promise<void> {
    if (problem.problem === 'above_bot' || problem.problem === 'no_permission') {
      await this.#block(change, problem);
      return;
    }
    await finish(
      'failed',
      `refused: ${problem.problem}${problem.permission ? ` (${problem.permission})` : ''}`,
    );
    if (this.#o.blocks.firstTime(change.guildId, change.roleId, problem.problem)) this.#warn(change, problem);
  }

  /** Block the role: this change and the next ones wait for a fix or the next probe. One notice per block. */
  async #block(change: RoleChange, refusal: RoleRefusal): Promise<void> {
    const block = this.#o.blocks.block(change.guildId, change.roleId);
    await this.#o.store.deferRoleChange(change.id, change.claimToken ?? '', block.probeAt);
    this.#o.logger.warn(
      { guildId: change.guildId, roleId: change.roleId, problem: refusal.problem, nextProbeMs: block.waitMs },
      'gated role blocked',
    );
    if (block.first) this.#warn(change, refusal);
  }

  #warn(change: RoleChange, refusal: RoleRefusal): void {
    this.#o.logger.warn(
      { guildId: change.guildId, roleId: change.roleId, problem: refusal.problem },
      'gated role cannot be managed',
    );
    this.#o.notices.post(change.guildId, { kind: 'role_refused', change, refusal });
  }
}

function errorText(error: unknown): string {
  if (error instanceof DiscordAPIError)
    return `${error.status} ${error.code}: ${truncate(error.message, 200)}`;
  return error instanceof Error ? truncate(`${error.name}: ${error.message}`, 200) : 'unknown error';
}
