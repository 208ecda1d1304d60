/**
 * Who may see what on the dashboard, on every request: the servers where the signed-in account has
 * Manage Server or Administrator at server level (Discord's own count in `GET /users/@me/guilds`, decided
 * by authority.ts) and the bot is a member (its snapshot is in the store). The list rides in the sealed
 * session and is read from Discord again once older than `maxAgeMs` (60 s at most), so a demoted admin
 * loses access within a minute. Changes need more, checked by the process that owns the server
 * (gating/dashboard/operations.ts).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type DiscordOAuthConfig, DiscordOAuthError, fetchCurrentUserGuilds } from '../../discord/oauth.ts';
import { permissionsHoldRight } from '../../gating/roles/authority.ts';
import type { GatingStore } from '../../store/types.ts';
import { type DashboardSession, readSession, type SessionKeys, writeSession } from './session.ts';

/** The longest the dashboard trusts a server list read from Discord. */
export const RIGHTS_MAX_AGE_MS = 60_000;
/** Servers a session lists at most (the cookie must stay small). */
export const MAX_SESSION_GUILDS = 100;

export interface RightsOptions extends SessionKeys {
  oauth: DiscordOAuthConfig;
  store: Pick<GatingStore, 'listGuildAuthorities'>;
  /** How old a server list may be before it is read again: at most RIGHTS_MAX_AGE_MS. */
  maxAgeMs: number;
}

/** The servers the token's account may see on the dashboard, where the bot is too, by name. */
export async function dashboardGuilds(
  o: Pick<RightsOptions, 'oauth' | 'store'>,
  token: string,
): Promise<string[]> {
  const servers = await fetchCurrentUserGuilds(o.oauth, token);
  const allowed = servers.filter((g) => permissionsHoldRight(g, 'dashboard')).map((g) => g.id);
  const present = await o.store.listGuildAuthorities(allowed);
  return present
    .sort((a, b) => (a.name ?? '').localeCompare(b.name ?? '') || a.guildId.localeCompare(b.guildId))
    .slice(0, MAX_SESSION_GUILDS)
    .map((g) => g.guildId);
}

export type Viewer =
  | { kind: 'ok'; session: DashboardSession }
  /** No session, or a forged, tampered or expired one. */
  | { kind: 'signed_out' }
  /** Discord no longer accepts the session's token (revoked, expired): sign in again. */
  | { kind: 'ended' }
  /** Discord could not be asked: nothing is shown rather than trusting an old list. */
  | { kind: 'discord_down' };

/** The signed-in viewer with a server list at most `maxAgeMs` old (read again, and the cookie rewritten). */
export async function currentViewer(
  o: RightsOptions,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<Viewer> {
  const session = readSession(o, request);
  if (!session) return { kind: 'signed_out' };
  const now = o.now();
  const maxAge = Math.min(o.maxAgeMs, RIGHTS_MAX_AGE_MS);
  if (now - session.guildsAt < maxAge && session.guildsAt <= now) return { kind: 'ok', session };
  try {
    const fresh: DashboardSession = {
      ...session,
      guilds: await dashboardGuilds(o, session.token),
      guildsAt: now,
    };
    writeSession(o, reply, fresh);
    return { kind: 'ok', session: fresh };
  } catch (error) {
    if (error instanceof DiscordOAuthError && (error.status === 401 || error.status === 403))
      return { kind: 'ended' };
    return { kind: 'discord_down' };
  }
}
