/**
 * Every server page's gate, in front of each route under `/dashboard/:guildId`: the session, the
 * same-origin check and CSRF token for a POST, the server in the account's list and the bot in it, the
 * viewer's standing there now (a timeout shows nothing), and the change limit for a POST.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DashboardAnswer, DashboardRequest } from '../../gating/dashboard/types.ts';
import type { StoredGuildAuthority } from '../../store/types.ts';
import { requestLocale } from '../locale.ts';
import type { DashboardFrame, GuildPage } from '../pages/dashboardDocument.ts';
import type { DashboardMessage } from '../pages/dashboardPages.ts';
import type { DashboardNames } from '../pages/dashboardParts.ts';
import { type DashboardContext, formOf, MAX_FORM_BYTES } from './context.ts';
import { clearSession, DASHBOARD_PATH, type DashboardSession, isCsrfToken, isSameOrigin } from './session.ts';
import { liveViewer } from './signOut.ts';
import type { Standing } from './standing.ts';

const GUILD_ID = /^\d{17,20}$/;
/** The page for each standing that shows nothing (a timeout says so; no rights reads as no such server). */
const STANDING_REFUSALS = {
  no_rights: [404, 'notFound'],
  timed_out: [403, 'timedOut'],
  no_answer: [503, 'noAnswer'],
} as const satisfies Record<Exclude<Standing, 'allowed'>, [number, DashboardMessage]>;

/** A request as a page builds it: the route adds the guild it checked. */
export type WithoutGuild<T> = T extends unknown ? Omit<T, 'guildId'> : never;

/** What a server page's handler gets once the gate let the request through. */
export interface GuildContext {
  session: DashboardSession;
  guildId: string;
  snapshot: StoredGuildAuthority;
  names: DashboardNames;
  /** Roles a form may offer: not @everyone, not managed, highest first. */
  roles: { id: string; name: string }[];
  frame: DashboardFrame & { guild: NonNullable<DashboardFrame['guild']> };
  /** Asks the process that owns this server (it checks the change rights itself). */
  run: (request: WithoutGuild<DashboardRequest>) => Promise<DashboardAnswer>;
}

export type GuildHandler = (
  ctx: GuildContext,
  request: FastifyRequest,
  reply: FastifyReply,
) => Promise<FastifyReply>;

/** Registers a server page: `page` is the tab it belongs to, `path` follows `/dashboard/:guildId`. */
export type GuildRoute = (
  page: GuildPage,
  method: 'GET' | 'POST',
  path: string,
  handle: GuildHandler,
) => void;

/** The guild context for a request the gate let through. */
function guildContext(
  dash: DashboardContext,
  guildId: string,
  session: DashboardSession,
  snapshot: StoredGuildAuthority,
  page: GuildPage,
  locale: string,
): GuildContext {
  const roles = [...snapshot.roles]
    .filter((r) => r.id !== guildId && r.managed !== true)
    .sort((a, b) => b.position - a.position)
    .map((r) => ({ id: r.id, name: r.name }));
  return {
    session,
    guildId,
    snapshot,
    roles,
    names: {
      roles: new Map(snapshot.roles.map((r) => [r.id, r.name])),
      channels: new Map((snapshot.channels ?? []).map((c) => [c.id, c.name])),
    },
    frame: { ...dash.frameOf(locale, session), guild: { id: guildId, name: snapshot.name ?? guildId, page } },
    run: (request) => dash.operations.run({ ...request, guildId } as DashboardRequest),
  };
}

/**
 * Every server page's gate: the session (signed out: 403), for a POST the same-origin check and the
 * CSRF token (403), the rights read at most a minute ago and the bot in the server (else 404, with
 * nothing of the server's), then `handle`.
 */
export function guildRouter(app: FastifyInstance, dash: DashboardContext): GuildRoute {
  const { logger, message } = dash;
  return (page, method, path, handle) => {
    const url = `${DASHBOARD_PATH}/:guildId${path}`;
    const handler = async (request: FastifyRequest, reply: FastifyReply) => {
      const guildId = (request.params as { guildId?: string }).guildId ?? '';
      const browserLocale = requestLocale(request);
      if (method === 'POST' && !isSameOrigin(dash.publicUrl, request)) {
        logger.warn({ route: url }, 'dashboard request refused: not from this site');
        return message(reply, 403, browserLocale, 'forbidden');
      }
      const viewer = await liveViewer(dash.ends, request, reply);
      const next = `/${guildId}${page}`;
      if (viewer.kind === 'signed_out')
        return message(reply, 403, browserLocale, 'signedOut', { next: GUILD_ID.test(guildId) ? next : '' });
      if (viewer.kind === 'ended') {
        clearSession(dash.rights, reply);
        return message(reply, 403, browserLocale, 'ended', { next: GUILD_ID.test(guildId) ? next : '' });
      }
      if (viewer.kind === 'discord_down') return message(reply, 503, browserLocale, 'discordDown');
      const { session } = viewer;
      const locale = requestLocale(request, session.locale);
      if (method === 'POST' && !isCsrfToken(dash.key, session, formOf(request.body).csrf)) {
        logger.warn({ route: url, userId: session.userId }, 'dashboard request refused: no valid CSRF token');
        return message(reply, 403, locale, 'forbidden', { session });
      }
      const snapshot =
        GUILD_ID.test(guildId) && session.guilds.includes(guildId)
          ? await dash.store.getGuildAuthority(guildId)
          : undefined;
      if (!snapshot) {
        if (GUILD_ID.test(guildId))
          logger.info(
            { route: url, userId: session.userId, guildId },
            'dashboard: server not in the account’s list',
          );
        return message(reply, 404, locale, 'notFound', { session });
      }
      const standing = await dash.standings.of(guildId, session.userId);
      if (standing !== 'allowed') {
        logger.info({ route: url, userId: session.userId, guildId, standing }, 'dashboard: no rights now');
        const [status, what] = STANDING_REFUSALS[standing];
        return message(reply, status, locale, what, { session });
      }
      if (method === 'POST') {
        const wait = await dash.limits.dashboardChanges(request, session.userId);
        if (wait !== undefined) {
          reply.header('retry-after', String(wait));
          return message(reply, 429, locale, 'tooManyChanges', { session, seconds: wait });
        }
      }
      return handle(guildContext(dash, guildId, session, snapshot, page, locale), request, reply);
    };
    if (method === 'GET') app.get(url, handler);
    else app.post(url, { bodyLimit: MAX_FORM_BYTES }, handler);
  };
}
