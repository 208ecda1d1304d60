/** Gating exemptions (`gating_exemptions`, migration 11): members and roles whose gated roles stay. */

export type ExemptionKind = 'member' | 'role';

/** A member, or every holder of a role, from whom gating never removes a gated role. */
export interface Exemption {
  guildId: string;
  kind: ExemptionKind;
  /** The member's user id or the role's id. */
  targetId: string;
  /** The moderator who added it. */
  addedBy: string;
  addedAt: number;
}

export interface ExemptionStore {
  /**
   * Add an exemption (an audit event in the same transaction); `created` false when it was there already
   * (then it is left as it was, with its first adder).
   */
  addExemption(input: Omit<Exemption, 'addedAt'>): Promise<{ exemption: Exemption; created: boolean }>;
  /** Remove one (audited); false when there was none. */
  removeExemption(key: Pick<Exemption, 'guildId' | 'kind' | 'targetId'>, actorId: string): Promise<boolean>;
  /** The guild's exemptions, members first, oldest first. */
  listExemptions(guildId: string): Promise<Exemption[]>;
}
