/**
 * `/gating exempt`: members and roles from whom gating never removes a gated role. Adding or removing
 * one takes the rights to hand the gated roles out by hand (see `exemptRefusal`).
 */
import type { Client } from 'discord.js';
import type { Exemption, ExemptionKind, GatingStore } from '../store/types.ts';
import { guildOf, invokerRights, memberOf, roleInfoOf } from './roles/discordReads.ts';
import type { RoleInfo } from './roles/hierarchy.ts';
import { type ExemptRefusal, exemptRefusal } from './rules/exemptions.ts';
import { loadRoleRules } from './rules/ruleReads.ts';

/** At most this many exempt members' names are looked up for a list. */
const NAMED_MAX = 25;

export interface ExemptTarget {
  kind: ExemptionKind;
  targetId: string;
}

export type ExemptResult =
  | { kind: 'not_set_up' }
  | { kind: 'refused'; refusal: ExemptRefusal }
  /** `changed` false: it was already there (add) or was not there (remove). */
  | { kind: 'added' | 'removed'; changed: boolean; exemption: Exemption | null };

export interface ExemptionList {
  exemptions: Exemption[];
  /** Display names of exempt members and of those who added exemptions, where Discord had them. */
  userNames: Map<string, string>;
  /** Their usernames, which tell apart members of one display name. */
  usernames: Map<string, string>;
}

/** Adds, removes and lists a guild's gating exemptions. */
export class ExemptionGating {
  readonly #store: GatingStore;
  readonly #discord: Client;

  constructor(options: { store: GatingStore; discord: Client }) {
    this.#store = options.store;
    this.#discord = options.discord;
  }

  /** Exempt a member or a role, when the invoker may. */
  async add(guildId: string, target: ExemptTarget, actorId: string): Promise<ExemptResult> {
    const refused = await this.#check(guildId, target, actorId);
    if (refused) return refused;
    const { exemption, created } = await this.#store.addExemption({ guildId, ...target, addedBy: actorId });
    return { kind: 'added', changed: created, exemption };
  }

  /** Lift an exemption (removals apply again from the next re-check), when the invoker may. */
  async remove(guildId: string, target: ExemptTarget, actorId: string): Promise<ExemptResult> {
    const refused = await this.#check(guildId, target, actorId);
    if (refused) return refused;
    const changed = await this.#store.removeExemption({ guildId, ...target }, actorId);
    return { kind: 'removed', changed, exemption: null };
  }

  /** The guild's exemptions, with the names Discord has for the members in them. */
  async list(guildId: string): Promise<ExemptionList> {
    const exemptions = await this.#store.listExemptions(guildId);
    const userNames = new Map<string, string>();
    const usernames = new Map<string, string>();
    const guild = await guildOf(this.#discord, guildId);
    if (!guild) return { exemptions, userNames, usernames };
    const ids = [
      ...new Set(exemptions.flatMap((e) => (e.kind === 'member' ? [e.targetId, e.addedBy] : [e.addedBy]))),
    ];
    await Promise.all(
      ids.slice(0, NAMED_MAX).map(async (id) => {
        const member = await memberOf(guild, id).catch(() => null);
        if (!member) return;
        userNames.set(id, member.displayName);
        usernames.set(id, member.user.username);
      }),
    );
    return { exemptions, userNames, usernames };
  }

  async #check(guildId: string, target: ExemptTarget, actorId: string): Promise<ExemptResult | null> {
    const settings = await this.#store.getGuildSettings(guildId);
    if (!settings) return { kind: 'not_set_up' };
    const guild = await guildOf(this.#discord, guildId);
    if (!guild) throw new Error('the bot is not in this server');
    // Role rules' roles too: an exemption holds their removals as well.
    const ruleRoles = (await loadRoleRules(this.#store, guildId)).map((r) => r.roleId);
    const gatedRoles = [settings.humanRoleId, settings.spamRoleId, settings.riskyRoleId, ...ruleRoles]
      .filter((id) => id !== null)
      .map((id) => roleInfoOf(guild, id))
      .filter((r): r is RoleInfo => r !== undefined);
    const refusal = exemptRefusal({
      guildId,
      invoker: invokerRights(guild, await memberOf(guild, actorId)),
      gatedRoles,
      target:
        target.kind === 'member'
          ? { kind: 'member' }
          : { kind: 'role', roleId: target.targetId, role: roleInfoOf(guild, target.targetId) },
    });
    return refusal ? { kind: 'refused', refusal } : null;
  }
}
