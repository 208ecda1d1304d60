/**
 * The gating service: proves identities (the identity's own record, or a wallet signature), evaluates
 * the guild's rules on each proven identity's credentials, and queues the role changes that follow.
 * It never rewards an unproven claim, never hands out a role its invoker could not, never removes a role
 * because a lookup failed or on a single sighting in an automated pass, and records why every change
 * happened. This file is the surface the commands, pages and processes use; each part owns one job:
 * `verification` (proofs), `members` (one member), `guilds` (rules, status, whole-guild re-checks).
 * gatingParts.ts builds and wires the parts; serviceLifecycle.ts starts and stops them.
 */
import type { Client, Guild } from 'discord.js';
import type { VerifyPanelStore } from '../store/types.ts';
import type { DashboardExecutor } from './dashboard/operations.ts';
import type { ExemptionGating } from './exemptionGating.ts';
import type { ExportStore } from './exports/gatingExport.ts';
import { buildGatingParts } from './gatingParts.ts';
import type { GuildGating } from './guildGating.ts';
import type { LinkedRolePagesSetup, LinkedRoleService } from './linkedRoles/linkedRoleService.ts';
import type { Verification } from './proofs/verification.ts';
import type { DueChecks } from './rechecks/dueChecks.ts';
import type { PruneCounts } from './rechecks/storeUpkeep.ts';
import type { MemberGating } from './roles/memberGating.ts';
import type { RuleGating } from './ruleGating.ts';
import { ServiceLifecycle } from './serviceLifecycle.ts';
import type { GatingServiceOptions } from './serviceOptions.ts';

export type { GatingServiceOptions } from './serviceOptions.ts';

/** The gating module's core: builds verification, member and guild gating, and runs their lifecycle. */
export class GatingService {
  /** /verify, the signing page's completed signature, /unverify. */
  readonly verification: Verification;
  /** One member: report, re-check, sync, and the member events Discord sends. */
  readonly members: MemberGating;
  /** One guild: setup, disable, settings, status, whole-guild re-check and its preview. */
  readonly guilds: GuildGating;
  /** Where each channel's verify panel message is, so `/gating panel` edits it instead of posting twice. */
  readonly panels: VerifyPanelStore;
  /** `/gating exempt`: members and roles gating never removes a gated role from. */
  readonly exemptions: ExemptionGating;
  /** `/gating rule`: roles given for conditions on what members proved. */
  readonly rules: RuleGating;
  /** The paged reads `/gating export` streams from. */
  readonly exports: ExportStore;
  /** Linked Roles (LINKED_ROLES_ENABLED): the metadata each member's proven identity earns; null when off. */
  readonly linkedRoles: LinkedRoleService | null;
  /** What `PUBLIC_URL/linked-role` needs; undefined when Linked Roles are off. */
  readonly linkedRolePages: LinkedRolePagesSetup | undefined;
  /** Members synced again once their due time has passed (old enough; a proof whose sync failed). */
  readonly dueChecks: DueChecks;
  /** With `signedProofInbox`: look for queued proofs now (the manager said one is waiting). */
  nudgeSignedProofs: () => void;
  /** The owners' dashboard's requests, run against this process's gateway state (operations.ts). */
  readonly dashboard: DashboardExecutor;
  /** With `dashboardInbox`: look for queued dashboard requests now (the manager said one is waiting). */
  nudgeDashboard: () => void;

  readonly #discord: Client;
  readonly #lifecycle: ServiceLifecycle;

  constructor(options: GatingServiceOptions) {
    const parts = buildGatingParts(options);
    this.panels = options.store;
    this.exports = options.store;
    this.#discord = options.discord;
    this.verification = parts.verification;
    this.members = parts.members;
    this.guilds = parts.guilds;
    this.exemptions = parts.exemptions;
    this.rules = parts.rules;
    this.dashboard = parts.dashboard;
    this.dueChecks = parts.dueChecks;
    this.linkedRoles = parts.linkedRoles;
    this.linkedRolePages = parts.linkedRolePages;
    this.nudgeSignedProofs = parts.nudgeSignedProofs;
    this.nudgeDashboard = parts.nudgeDashboard;
    this.#lifecycle = new ServiceLifecycle(parts.lifecycle);
  }

  /** The guild as the gateway cache has it (names, channels, the bot's member); undefined when not cached. */
  cachedGuild(guildId: string): Guild | undefined {
    return this.#discord.guilds.cache.get(guildId);
  }

  /** A user's name from the gateway cache, if it has them. */
  cachedUserName(userId: string): string | undefined {
    return this.#discord.users.cache.get(userId)?.username;
  }

  /** Start the role worker (resuming pending changes left by a crash), the periodic re-check and upkeep. */
  start(): void {
    this.#lifecycle.start();
  }

  /** Stop taking work, let in-progress role edits finish (bounded), stop timers. */
  stop(): Promise<void> {
    return this.#lifecycle.stop();
  }

  /** Delete expired nonces, finished role changes and audit events past their retention. */
  prune(): Promise<PruneCounts> {
    return this.#lifecycle.prune();
  }

  /** Resolves when the role queue is empty (for tests and graceful shutdown). */
  idle(guildId?: string): Promise<void> {
    return this.#lifecycle.idle(guildId);
  }
}
