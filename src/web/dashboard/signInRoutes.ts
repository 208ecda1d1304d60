/**
 * The dashboard's front door: `/dashboard` (the account's servers, or a Discord sign-in when signed out),
 * Discord's callback (a single-use state stored by its hash and bound to the browser by a cookie, then
 * the sealed session), and the sign-out.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  authorizeUrl,
  exchangeCode,
  fetchCurrentUser,
  hashOAuthState,
  isOAuthState,
  newOAuthState,
  oauthErrorSummary,
  safeEqual,
} from '../../discord/oauth.ts';
import { requestLocale } from '../locale.ts';
import type { GuildPage } from '../pages/dashboardDocument.ts';
import { renderServerList } from '../pages/dashboardPages.ts';
import { redirect } from '../responses.ts';
import { CDN, type DashboardContext, formOf, MAX_FORM_BYTES } from './context.ts';
import { dashboardGuilds } from './rights.ts';
import {
  clearSession,
  clearStateCookie,
  DASHBOARD_CALLBACK_PATH,
  DASHBOARD_PATH,
  type DashboardSession,
  isCsrfToken,
  isSameOrigin,
  newSessionId,
  readSession,
  SESSION_MS,
  STATE_MS,
  setStateCookie,
  stateCookie,
  writeSession,
} from './session.ts';
import { liveViewer, signOut } from './signOut.ts';

const ICON = /^(a_)?[0-9a-f]{32}$/;
const MAX_CODE_LENGTH = 512;
const PAGES: readonly GuildPage[] = ['', '/rules', '/exemptions', '/held', '/audit', '/health'];

/** The page to return to after signing in: a dashboard path this code knows, never any other. */
function returnPath(value: string | null | undefined): string {
  if (!value) return '';
  const match = /^\/(\d{17,20})(\/[a-z]+)?$/.exec(value);
  if (!match) return '';
  return PAGES.includes((match[2] ?? '') as GuildPage) ? value : '';
}

/** Starts a Discord sign-in that returns to `next` (a dashboard path). */
async function signIn(
  dash: DashboardContext,
  request: FastifyRequest,
  reply: FastifyReply,
  next: string,
): Promise<FastifyReply> {
  const wait = await dash.limits.signIns(request);
  if (wait !== undefined) {
    reply.header('retry-after', String(wait));
    return dash.message(reply, 429, requestLocale(request), 'tooManySignIns');
  }
  const { state, hash } = newOAuthState();
  const now = dash.now();
  await dash.store.createOAuthState(
    { stateHash: hash, purpose: 'dashboard', nonce: next, expiresAt: now + STATE_MS },
    now,
  );
  setStateCookie(dash.rights, reply, state);
  return redirect(
    reply,
    authorizeUrl(dash.oauth, {
      scopes: ['identify', 'guilds'],
      state,
      redirectPath: DASHBOARD_CALLBACK_PATH,
    }),
  );
}

/** `/dashboard`: the account's servers the bot is in, or a sign-in that returns to `?next`. */
async function serverList(dash: DashboardContext, request: FastifyRequest, reply: FastifyReply) {
  const viewer = await liveViewer(dash.ends, request, reply);
  const query = new URL(request.url, 'http://dashboard.invalid').searchParams;
  if (viewer.kind === 'signed_out' || viewer.kind === 'ended') {
    if (viewer.kind === 'ended') clearSession(dash.rights, reply);
    return signIn(dash, request, reply, returnPath(query.get('next')));
  }
  const locale = requestLocale(request);
  if (viewer.kind === 'discord_down') return dash.message(reply, 503, locale, 'discordDown');
  const { session } = viewer;
  const sessionLocale = requestLocale(request, session.locale);
  const listed = await dash.store.listGuildAuthorities(session.guilds);
  const byId = new Map(listed.map((g) => [g.guildId, g]));
  const servers = session.guilds.flatMap((id) => {
    const g = byId.get(id);
    if (!g) return [];
    const iconUrl = g.icon && ICON.test(g.icon) ? `${CDN}/icons/${g.guildId}/${g.icon}.png?size=64` : null;
    return [{ ...g, iconUrl }];
  });
  return dash.send(reply, 200, sessionLocale, (nonce) =>
    renderServerList(dash.frameOf(sessionLocale, session), servers, nonce),
  );
}

/** Discord's callback: the state checked and used up, the code exchanged, the session sealed. */
async function callback(dash: DashboardContext, request: FastifyRequest, reply: FastifyReply) {
  const { logger, message } = dash;
  const query = new URL(request.url, 'http://callback.invalid').searchParams;
  const state = query.get('state') ?? '';
  const browserState = stateCookie(request);
  const locale = requestLocale(request);
  clearStateCookie(dash.rights, reply);
  if (!isOAuthState(state) || !browserState || !safeEqual(browserState, state)) {
    logger.warn({ route: DASHBOARD_CALLBACK_PATH }, 'dashboard sign-in refused: state not from this browser');
    return message(reply, 400, locale, 'badState');
  }
  const now = dash.now();
  const issued = await dash.store.consumeOAuthState(hashOAuthState(state), now);
  if (issued?.purpose !== 'dashboard') {
    logger.warn(
      { route: DASHBOARD_CALLBACK_PATH },
      'dashboard sign-in refused: unknown, used or expired state',
    );
    return message(reply, 400, locale, 'badState');
  }
  if (query.get('error') !== null) {
    const denied = query.get('error') === 'access_denied';
    return message(reply, denied ? 200 : 502, locale, denied ? 'denied' : 'signInFailed');
  }
  const code = query.get('code') ?? '';
  if (code === '' || code.length > MAX_CODE_LENGTH) return message(reply, 400, locale, 'signInFailed');
  let session: DashboardSession;
  try {
    const grant = await exchangeCode(dash.oauth, {
      code,
      redirectPath: DASHBOARD_CALLBACK_PATH,
      needs: ['identify', 'guilds'],
    });
    const user = await fetchCurrentUser(dash.oauth, grant.accessToken);
    session = {
      sid: newSessionId(),
      userId: user.id,
      username: user.username,
      ...(user.locale ? { locale: user.locale } : {}),
      token: grant.accessToken,
      until: now + Math.min(SESSION_MS, grant.expiresIn * 1_000),
      guilds: await dashboardGuilds(dash.rights, grant.accessToken),
      guildsAt: now,
    };
  } catch (error) {
    logger.warn({ err: oauthErrorSummary(error) }, 'dashboard sign-in failed');
    return message(reply, 502, locale, 'signInFailed');
  }
  writeSession(dash.rights, reply, session);
  logger.info({ userId: session.userId, servers: session.guilds.length }, 'dashboard sign-in');
  return redirect(reply, `${dash.root}${returnPath(issued.nonce)}`);
}

/** Registers `/dashboard`, the sign-in's callback and the sign-out. */
export function registerSignInRoutes(app: FastifyInstance, dash: DashboardContext): void {
  app.get(DASHBOARD_PATH, (request, reply) => serverList(dash, request, reply));
  app.get(DASHBOARD_CALLBACK_PATH, (request, reply) => callback(dash, request, reply));
  app.post(`${DASHBOARD_PATH}/sign-out`, { bodyLimit: MAX_FORM_BYTES }, async (request, reply) => {
    // The cookie alone says who signs out: Discord down or not, the session ends (signOut.ts).
    const session = readSession(dash.rights, request);
    if (
      !isSameOrigin(dash.publicUrl, request) ||
      !session ||
      !isCsrfToken(dash.key, session, formOf(request.body).csrf)
    ) {
      dash.logger.warn(
        { route: 'sign-out' },
        'dashboard request refused: not from this site or no valid CSRF token',
      );
      return dash.message(reply, 403, requestLocale(request), 'forbidden');
    }
    await signOut(dash.ends, session, reply);
    return dash.message(reply, 200, requestLocale(request, session.locale), 'signedOutDone');
  });
}
