/**
 * The dashboard's requests, run where the guild's gateway state is (the process whose shards serve it):
 * the same service calls as the slash commands, with the same rights. A change first asks the one
 * authority (authority.ts) whether the signed-in member holds Manage Roles at server level, read now from
 * their roles in the server (a fresh member fetch, never anything the browser sent) and a timeout; the
 * service then checks the role hierarchy as `/gating` does. `standing` asks the same of the pages' right
 * (Manage Server), before a page shows anything.
 */
import type { Client } from 'discord.js';
import type { Logger } from '../../ops/log.ts';
import type { GatingStore } from '../../store/types.ts';
import type { ExemptionGating } from '../exemptionGating.ts';
import type { GuildGating } from '../guildGating.ts';
import { holdsRight, timeoutLimits } from '../roles/authority.ts';
import { guildAuthorityOf, memberRolesOf } from '../roles/authorityReads.ts';
import { guildOf, memberOf } from '../roles/discordReads.ts';
import type { RuleGating } from '../ruleGating.ts';
import { conditionOfKey } from '../rules/roleRules.ts';
import type { RecheckResult } from '../types.ts';
import type { ConfirmOutcome, DashboardRequest, DashboardResult, KeepOutcome } from './types.ts';

/** How long `confirmRemovals` waits for its re-check before answering that it is still running. */
export const CONFIRM_WAIT_MS = 5_000;

export interface DashboardExecutorOptions {
  discord: Client;
  store: Pick<GatingStore, 'clearHeldLosses' | 'addAuditEvent'>;
  guilds: GuildGating;
  rules: RuleGating;
  exemptions: ExemptionGating;
  logger: Logger;
  confirmWaitMs?: number;
}

/** Runs dashboard requests against this process's gateway state. */
export class DashboardExecutor {
  readonly #o: DashboardExecutorOptions;

  constructor(options: DashboardExecutorOptions) {
    this.#o = options;
  }

  async run(request: DashboardRequest): Promise<DashboardResult> {
    const { guildId } = request;
    const guild = await guildOf(this.#o.discord, guildId);
    if (!guild) return { kind: 'unavailable' };
    if (request.op === 'status') return { kind: 'status', status: await this.#o.guilds.status(guildId) };
    const member = await memberOf(guild, request.actorId);
    const authority = guildAuthorityOf(guild);
    const actor = member ? memberRolesOf(member) : null;
    if (request.op === 'standing') {
      const allowed = actor !== null && holdsRight(authority, actor, 'dashboard');
      return { kind: 'standing', allowed, timedOut: actor !== null && timeoutLimits(authority, actor) };
    }
    // Every change: Manage Roles at server level, from the member's roles as the server has them now.
    if (!actor || !holdsRight(authority, actor, 'moderate')) {
      this.#o.logger.warn(
        { guildId, userId: request.actorId, op: request.op },
        'dashboard change refused: no rights',
      );
      return { kind: 'no_rights' };
    }
    const { rules, exemptions } = this.#o;
    switch (request.op) {
      case 'rulePreview': {
        const { roleId, kind, value, match, actorId } = request;
        return {
          kind: 'rule',
          result: await rules.preview(guildId, { roleId, kind, value, match }, actorId),
        };
      }
      case 'ruleApply': {
        const condition = conditionOfKey(request.condition);
        if (!condition) {
          const refusal = { code: 'bad_condition', refusal: { code: 'unknown_kind' } } as const;
          return { kind: 'rule', result: { kind: 'refused', refusal } };
        }
        const proposal = { roleId: request.roleId, condition, match: request.match };
        return { kind: 'rule', result: await rules.apply(guildId, proposal, request.actorId) };
      }
      case 'ruleRemove':
        return { kind: 'ruleRemove', result: await rules.remove(guildId, request.rule, request.actorId) };
      case 'exemptAdd':
        return { kind: 'exempt', result: await exemptions.add(guildId, request.target, request.actorId) };
      case 'exemptRemove':
        return { kind: 'exempt', result: await exemptions.remove(guildId, request.target, request.actorId) };
      case 'confirmRemovals':
        return { kind: 'confirm', result: await this.#confirm(guildId, request.actorId) };
      case 'keepHeld':
        return { kind: 'keep', result: await this.#keep(guildId, request.actorId) };
    }
  }

  /** `/gating recheck confirm-removals:true`, waited for a little. */
  async #confirm(guildId: string, actorId: string): Promise<ConfirmOutcome> {
    const confirmed = await this.#o.guilds.confirmRemovals(
      guildId,
      actorId,
      `dashboard confirm-removals by ${actorId}`,
    );
    if (confirmed.kind === 'refused') return confirmed;
    const { run } = confirmed;
    run.catch((error: unknown) =>
      this.#o.logger.error({ err: error, guildId }, 'whole-server re-check from the dashboard failed'),
    );
    let timer: NodeJS.Timeout | undefined;
    const summary = await Promise.race([
      run,
      new Promise<null>((resolve) => {
        timer = setTimeout(resolve, this.#o.confirmWaitMs ?? CONFIRM_WAIT_MS, null);
      }),
    ]).finally(() => clearTimeout(timer));
    return summary ? { kind: 'done', summary: summary satisfies RecheckResult } : { kind: 'running' };
  }

  /**
   * Drop the held removals, keeping the roles: it decides who keeps gated roles, so it takes the rights
   * confirming them takes. A loss still seen is noted afresh by the next pass (and waits to be confirmed
   * again; the breaker holds it again if it is still a mass removal).
   */
  async #keep(guildId: string, actorId: string): Promise<KeepOutcome> {
    const problems = await this.#o.guilds.gatedRolesBeyond(guildId, actorId);
    if (problems.length > 0) return { kind: 'refused', problems };
    const count = await this.#o.store.clearHeldLosses(guildId);
    if (count > 0) {
      await this.#o.store.addAuditEvent({
        guildId,
        userId: actorId,
        kind: 'removals_kept',
        reason: `held removals kept by ${actorId}`,
        details: { count },
      });
    }
    return { kind: 'kept', count };
  }
}
