/**
 * Exemptions: members, and holders of roles, from whom gating never removes a gated role (staff, bots,
 * partners). They only hold removals back; additions go through as for anyone. Pure.
 */
import type { Exemption } from '../../store/types.ts';
import type { InvokerRights, RoleInfo } from '../roles/hierarchy.ts';
import type { RoleChangeWanted, RoleDiff } from './rules.ts';

/** Why a member's removals are held: their own exemption, or an exempt role they hold. */
export type ExemptBy = { kind: 'member' } | { kind: 'role'; roleId: string };

/** The exemption covering a member (their own first, then the first exempt role they hold), or null. */
export function exemptionOf(
  member: { userId: string; roleIds: ReadonlySet<string> },
  exemptions: readonly Pick<Exemption, 'kind' | 'targetId'>[],
): ExemptBy | null {
  if (exemptions.some((e) => e.kind === 'member' && e.targetId === member.userId)) return { kind: 'member' };
  const role = exemptions.find((e) => e.kind === 'role' && member.roleIds.has(e.targetId));
  return role ? { kind: 'role', roleId: role.targetId } : null;
}

/** A diff with an exempt member's removals taken out (`kept`); additions untouched. */
export function holdRemovals(
  diff: RoleDiff,
  by: ExemptBy | null,
): { diff: RoleDiff; kept: RoleChangeWanted[] } {
  if (by === null || diff.remove.length === 0) return { diff, kept: [] };
  return { diff: { add: diff.add, remove: [] }, kept: diff.remove };
}

/** Why an exemption was not added or removed (nothing changed). */
export type ExemptRefusal =
  /** Exempting @everyone would exempt every member. */
  | { code: 'everyone' }
  /** A gated role the invoker could not grant or take by hand: they may not decide who keeps it. */
  | { code: 'gated_role_above'; roleId: string; roleName: string }
  /** The role to exempt is not below the invoker's highest role. */
  | { code: 'target_above'; roleId: string; roleName: string };

export interface ExemptCheckInput {
  guildId: string;
  invoker: InvokerRights;
  /** The guild's gated roles as the guild has them now (a deleted one is left out: nothing to keep). */
  gatedRoles: readonly RoleInfo[];
  target: { kind: 'member' } | { kind: 'role'; roleId: string; role: RoleInfo | undefined };
}

/**
 * Whether the invoker may add (or remove) an exemption. An exemption decides who keeps a gated role, so
 * it takes the rights to hand that role out by hand, as `/gating setup` does: every gated role below the
 * invoker's highest role; a role exemption also targets a role below it (so a moderator cannot exempt a
 * role they could not give to themselves). A refusal names the role that stops it: the role asked about
 * when it is out of reach, else the first gated role that is. Owners and administrators may always.
 */
export function exemptRefusal(input: ExemptCheckInput): ExemptRefusal | null {
  const { invoker, target } = input;
  if (target.kind === 'role' && target.roleId === input.guildId) return { code: 'everyone' };
  if (invoker.bypass) return null;
  // The role asked about first: when both it and a gated role are out of reach, the refusal names it.
  if (
    target.kind === 'role' &&
    (target.role?.position ?? Number.POSITIVE_INFINITY) >= invoker.highestPosition
  ) {
    return { code: 'target_above', roleId: target.roleId, roleName: target.role?.name ?? target.roleId };
  }
  const above = input.gatedRoles.find((r) => r.position >= invoker.highestPosition);
  if (above) return { code: 'gated_role_above', roleId: above.id, roleName: above.name };
  return null;
}
