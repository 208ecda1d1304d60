/**
 * What the owners' dashboard asks of the process that owns a guild (the gateway's guild state: dry runs
 * over the member list, Apply, held removals, health) and what it answers: plain JSON, so a request can
 * cross processes through the store. Type imports only: the web side, which may run without discord.js,
 * imports this.
 */
import type { ExemptResult, ExemptTarget } from '../exemptionGating.ts';
import type { RoleProblem } from '../roles/hierarchy.ts';
import type { RuleAddResult, RuleRemoveResult } from '../ruleGating.ts';
import type { RuleMatch } from '../rules/roleRules.ts';
import type { GuildStatus, RecheckResult } from '../types.ts';

/**
 * A request. `actorId` is the signed-in account, from the dashboard's sealed session (never from the
 * form): the owning process reads that member's roles and decides with authority.ts.
 */
export type DashboardRequest =
  | { op: 'status'; guildId: string }
  /** Whether the signed-in member may see the server's pages now (asked before every page). */
  | { op: 'standing'; guildId: string; actorId: string }
  | {
      op: 'rulePreview';
      guildId: string;
      actorId: string;
      roleId: string;
      kind: string;
      value: string;
      match: RuleMatch | null;
    }
  | {
      op: 'ruleApply';
      guildId: string;
      actorId: string;
      roleId: string;
      condition: string;
      match: RuleMatch | null;
    }
  | { op: 'ruleRemove'; guildId: string; actorId: string; rule: string }
  | { op: 'exemptAdd' | 'exemptRemove'; guildId: string; actorId: string; target: ExemptTarget }
  | { op: 'confirmRemovals' | 'keepHeld'; guildId: string; actorId: string };

/** `confirmRemovals`: refused, done within the wait (with its summary), or still running. */
export type ConfirmOutcome =
  | { kind: 'refused'; problems: RoleProblem[] }
  | { kind: 'done'; summary: RecheckResult }
  | { kind: 'running' };

/** `keepHeld`: refused, or how many held removals were dropped (the roles stay). */
export type KeepOutcome = { kind: 'refused'; problems: RoleProblem[] } | { kind: 'kept'; count: number };

/** The answer to a request, as the owning process gives it. */
export type DashboardResult =
  /** The member does not hold Manage Roles at server level now (or is not in the server): nothing ran. */
  | { kind: 'no_rights' }
  /** The bot is not in the server, or this process runs no gating: nothing ran. */
  | { kind: 'unavailable' }
  /** The process failed while running it (logged there); what ran is in the audit trail. */
  | { kind: 'failed' }
  | { kind: 'status'; status: GuildStatus }
  /**
   * `standing`: the member holds the dashboard's right (Manage Server, or ownership or Administrator) at
   * server level now; `timedOut` when a timeout is what takes it.
   */
  | { kind: 'standing'; allowed: boolean; timedOut: boolean }
  | { kind: 'rule'; result: RuleAddResult }
  | { kind: 'ruleRemove'; result: RuleRemoveResult }
  | { kind: 'exempt'; result: ExemptResult }
  | { kind: 'confirm'; result: ConfirmOutcome }
  | { kind: 'keep'; result: KeepOutcome };

/** How a page's request went: answered, or no answer within the page's wait (it may still run, briefly). */
export type DashboardAnswer = { kind: 'answered'; result: DashboardResult } | { kind: 'timeout' };

/** Runs a request for a page: in this process when it owns the guild, else through the store. */
export interface DashboardOperations {
  run(request: DashboardRequest): Promise<DashboardAnswer>;
}
