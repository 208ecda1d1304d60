/**
 * `PUBLIC_URL/dashboard`: the owners' dashboard. Discord sign-in (`identify guilds`, a single-use state
 * stored by its hash and bound to the browser by a cookie), the sealed session (session.ts), the rights
 * on every request (rights.ts: Manage Server or Administrator at server level, and the bot in the
 * server; anything else is a 404 with none of the server's data), and the pages. Reads come from the
 * shared store in whichever process serves the page; what needs the gateway's guild state goes to the
 * process that owns the guild (`operations`), which checks the change rights itself. Every POST must come
 * from this site (same-origin check) with the session's CSRF token, else 403 and nothing changes.
 */
import { Readable } from 'node:stream';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  authorizeUrl,
  type DiscordOAuthConfig,
  exchangeCode,
  fetchCurrentUser,
  hashOAuthState,
  isOAuthState,
  newOAuthState,
  oauthErrorSummary,
  safeEqual,
} from '../../discord/oauth.ts';
import {
  AUDIT_PAGE_SIZE,
  auditEventsOldestFirst,
  CHART_DAYS,
  type ChartDays,
  LinkedCounts,
  readAuditPage,
  readOverview,
} from '../../gating/dashboard/reads.ts';
import { DASHBOARD_WAIT_MS } from '../../gating/dashboard/requests.ts';
import type { DashboardOperations, DashboardRequest } from '../../gating/dashboard/types.ts';
import { AUDIT_COLUMNS, auditActor } from '../../gating/exports/gatingExport.ts';
import { RULE_KINDS, type RuleMatch } from '../../gating/rules/roleRules.ts';
import { loadRoleRules } from '../../gating/rules/ruleReads.ts';
import type { MessageKey } from '../../i18n/index.ts';
import type { AuditCursor, AuditFilter, GatingStore, StoredGuildAuthority } from '../../store/types.ts';
import { CSV_BOM, csvRow } from '../../text/csv.ts';
import type { WebLimiters } from '../limits.ts';
import { requestLocale } from '../locale.ts';
import { renderAudit } from '../pages/dashboardAudit.ts';
import type { DashboardFrame, GuildPage } from '../pages/dashboardDocument.ts';
import { renderOverview } from '../pages/dashboardOverview.ts';
import {
  type DashboardMessage,
  exemptOutcome,
  heldOutcome,
  renderExemptions,
  renderHealth,
  renderHeld,
  renderMessage,
  renderServerList,
} from '../pages/dashboardPages.ts';
import { createFormats, type DashboardNames, type Formats, notice } from '../pages/dashboardParts.ts';
import { type RuleForm, renderRules, ruleOutcome } from '../pages/dashboardRules.ts';
import { text } from '../pages/words.ts';
import { publicPath, redirect, sendHtml, type WebLogger } from '../responses.ts';
import { auditFilterOf, USER_ID } from './auditFilter.ts';
import { dashboardGuilds, RIGHTS_MAX_AGE_MS, type RightsOptions } from './rights.ts';
import {
  clearSession,
  clearStateCookie,
  csrfToken,
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
import { liveViewer, type SignOutOptions, signOut } from './signOut.ts';
import { type Standing, ViewerStandings } from './standing.ts';

/** What the app needs to serve the dashboard (the store and limits come from the app). */
export interface DashboardSetup {
  /** The shared store: sign-in states, the pages' reads. */
  store: GatingStore;
  oauth: DiscordOAuthConfig;
  /** TOKEN_ENCRYPTION_KEY as bytes: seals the session, keys the CSRF tokens. */
  key: Buffer;
  operations: DashboardOperations;
  /** How old the account's server list may get before it is read from Discord again (≤ 60 s). */
  rightsMaxAgeMs?: number;
  /** How long a page waits for the owning process (said in the timeout notice). */
  waitMs?: number;
}

export interface DashboardRouteOptions extends DashboardSetup {
  logger: WebLogger;
  limits: WebLimiters;
  now: () => number;
}

const GUILD_ID = /^\d{17,20}$/;
const CURSOR = /^(\d{1,16})\.(\d{1,16})$/;
const ICON = /^(a_)?[0-9a-f]{32}$/;
const CDN = 'https://cdn.discordapp.com';
const MAX_FORM_BYTES = 4_096;
const MAX_CODE_LENGTH = 512;
const MAX_VALUE = 40;
const MAX_RULE_OPTION = 120;
/** The page for each standing that shows nothing (a timeout says so; no rights reads as no such server). */
const STANDING_REFUSALS = {
  no_rights: [404, 'notFound'],
  timed_out: [403, 'timedOut'],
  no_answer: [503, 'noAnswer'],
} as const satisfies Record<Exclude<Standing, 'allowed'>, [number, DashboardMessage]>;
const PAGES: readonly GuildPage[] = ['', '/rules', '/exemptions', '/held', '/audit', '/health'];

interface GuildContext {
  session: DashboardSession;
  guildId: string;
  snapshot: StoredGuildAuthority;
  names: DashboardNames;
  /** Roles a form may offer: not @everyone, not managed, highest first. */
  roles: { id: string; name: string }[];
  frame: DashboardFrame & { guild: NonNullable<DashboardFrame['guild']> };
}

type Form = Record<string, string>;
/** A request as a page builds it: the route adds the guild it checked. */
type WithoutGuild<T> = T extends unknown ? Omit<T, 'guildId'> : never;

/** The form's text fields; anything else the body holds (or a body that is not a form) is nothing. */
function formOf(body: unknown): Form {
  if (typeof body !== 'object' || body === null) return {};
  const form: Form = {};
  for (const [name, value] of Object.entries(body as Record<string, unknown>))
    if (typeof value === 'string') form[name] = value;
  return form;
}

/** The page to return to after signing in: a dashboard path this code knows, never any other. */
function returnPath(value: string | null | undefined): string {
  if (!value) return '';
  const match = /^\/(\d{17,20})(\/[a-z]+)?$/.exec(value);
  if (!match) return '';
  return PAGES.includes((match[2] ?? '') as GuildPage) ? value : '';
}

function cursorOf(value: string | null): AuditCursor | undefined | null {
  if (value === null || value === '') return undefined;
  const match = CURSOR.exec(value);
  return match ? { createdAt: Number(match[1]), id: Number(match[2]) } : null;
}

/** Registers every dashboard route on `app` (a scope with the cookie and form parsers). */
export function registerDashboardRoutes(app: FastifyInstance, o: DashboardRouteOptions): void {
  const publicUrl = o.oauth.publicUrl;
  const root = publicPath(publicUrl, DASHBOARD_PATH);
  const waitMs = o.waitMs ?? DASHBOARD_WAIT_MS;
  const waitSeconds = Math.round(waitMs / 1_000);
  const linkedCounts = new LinkedCounts();
  const rights: RightsOptions = {
    publicUrl,
    key: o.key,
    now: o.now,
    oauth: o.oauth,
    store: o.store,
    maxAgeMs: Math.min(o.rightsMaxAgeMs ?? RIGHTS_MAX_AGE_MS, RIGHTS_MAX_AGE_MS),
  };
  const standings = new ViewerStandings({ operations: o.operations, maxAgeMs: rights.maxAgeMs, now: o.now });
  const ends: SignOutOptions = { rights, oauth: o.oauth, store: o.store, logger: o.logger };

  const send = (reply: FastifyReply, status: number, locale: string, render: (nonce: string) => string) =>
    sendHtml(reply.header('referrer-policy', 'same-origin'), status, render, {
      formAction: 'self',
      locale,
      images: [CDN],
    });
  // One set of Intl formats per locale (a shipped one: at most ten), reused by every page.
  const formats = new Map<string, Formats>();
  const formatsOf = (locale: string): Formats => {
    let made = formats.get(locale);
    if (!made) {
      made = createFormats(locale);
      formats.set(locale, made);
    }
    return made;
  };
  const frameOf = (locale: string, session?: DashboardSession): DashboardFrame => ({
    locale,
    formats: formatsOf(locale),
    root,
    ...(session ? { account: { username: session.username, csrf: csrfToken(o.key, session) } } : {}),
  });
  const message = (
    reply: FastifyReply,
    status: number,
    locale: string,
    what: DashboardMessage,
    extra: { session?: DashboardSession; next?: string; seconds?: number } = {},
  ) => {
    const signIn =
      what === 'signedOut' || what === 'ended' || what === 'badState' || what === 'signedOutDone'
        ? `${root}${extra.next ? `?next=${encodeURIComponent(extra.next)}` : ''}`
        : undefined;
    return send(reply, status, locale, (nonce) =>
      renderMessage(frameOf(locale, extra.session), what, nonce, {
        ...(signIn ? { signIn } : {}),
        ...(extra.seconds === undefined ? {} : { seconds: extra.seconds }),
      }),
    );
  };

  /** Starts a Discord sign-in that returns to `next` (a dashboard path). */
  async function signIn(request: FastifyRequest, reply: FastifyReply, next: string): Promise<FastifyReply> {
    const wait = await o.limits.signIns(request);
    if (wait !== undefined) {
      reply.header('retry-after', String(wait));
      return message(reply, 429, requestLocale(request), 'tooManySignIns');
    }
    const { state, hash } = newOAuthState();
    const now = o.now();
    await o.store.createOAuthState(
      { stateHash: hash, purpose: 'dashboard', nonce: next, expiresAt: now + STATE_MS },
      now,
    );
    setStateCookie(rights, reply, state);
    return redirect(
      reply,
      authorizeUrl(o.oauth, { scopes: ['identify', 'guilds'], state, redirectPath: DASHBOARD_CALLBACK_PATH }),
    );
  }

  app.get(DASHBOARD_PATH, async (request, reply) => {
    const viewer = await liveViewer(ends, request, reply);
    const query = new URL(request.url, 'http://dashboard.invalid').searchParams;
    if (viewer.kind === 'signed_out' || viewer.kind === 'ended') {
      if (viewer.kind === 'ended') clearSession(rights, reply);
      return signIn(request, reply, returnPath(query.get('next')));
    }
    const locale = requestLocale(request);
    if (viewer.kind === 'discord_down') return message(reply, 503, locale, 'discordDown');
    const { session } = viewer;
    const sessionLocale = requestLocale(request, session.locale);
    const listed = await o.store.listGuildAuthorities(session.guilds);
    const byId = new Map(listed.map((g) => [g.guildId, g]));
    const servers = session.guilds.flatMap((id) => {
      const g = byId.get(id);
      if (!g) return [];
      const iconUrl = g.icon && ICON.test(g.icon) ? `${CDN}/icons/${g.guildId}/${g.icon}.png?size=64` : null;
      return [{ ...g, iconUrl }];
    });
    return send(reply, 200, sessionLocale, (nonce) =>
      renderServerList(frameOf(sessionLocale, session), servers, nonce),
    );
  });

  app.get(DASHBOARD_CALLBACK_PATH, async (request, reply) => {
    const query = new URL(request.url, 'http://callback.invalid').searchParams;
    const state = query.get('state') ?? '';
    const browserState = stateCookie(request);
    const locale = requestLocale(request);
    clearStateCookie(rights, reply);
    if (!isOAuthState(state) || !browserState || !safeEqual(browserState, state)) {
      o.logger.warn(
        { route: DASHBOARD_CALLBACK_PATH },
        'dashboard sign-in refused: state not from this browser',
      );
      return message(reply, 400, locale, 'badState');
    }
    const now = o.now();
    const issued = await o.store.consumeOAuthState(hashOAuthState(state), now);
    if (issued?.purpose !== 'dashboard') {
      o.logger.warn(
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
      const grant = await exchangeCode(o.oauth, {
        code,
        redirectPath: DASHBOARD_CALLBACK_PATH,
        needs: ['identify', 'guilds'],
      });
      const user = await fetchCurrentUser(o.oauth, grant.accessToken);
      session = {
        sid: newSessionId(),
        userId: user.id,
        username: user.username,
        ...(user.locale ? { locale: user.locale } : {}),
        token: grant.accessToken,
        until: now + Math.min(SESSION_MS, grant.expiresIn * 1_000),
        guilds: await dashboardGuilds(rights, grant.accessToken),
        guildsAt: now,
      };
    } catch (error) {
      o.logger.warn({ err: oauthErrorSummary(error) }, 'dashboard sign-in failed');
      return message(reply, 502, locale, 'signInFailed');
    }
    writeSession(rights, reply, session);
    o.logger.info({ userId: session.userId, servers: session.guilds.length }, 'dashboard sign-in');
    return redirect(reply, `${root}${returnPath(issued.nonce)}`);
  });

  app.post(`${DASHBOARD_PATH}/sign-out`, { bodyLimit: MAX_FORM_BYTES }, async (request, reply) => {
    // The cookie alone says who signs out: Discord down or not, the session ends (signOut.ts).
    const session = readSession(rights, request);
    if (
      !isSameOrigin(publicUrl, request) ||
      !session ||
      !isCsrfToken(o.key, session, formOf(request.body).csrf)
    ) {
      o.logger.warn(
        { route: 'sign-out' },
        'dashboard request refused: not from this site or no valid CSRF token',
      );
      return message(reply, 403, requestLocale(request), 'forbidden');
    }
    await signOut(ends, session, reply);
    return message(reply, 200, requestLocale(request, session.locale), 'signedOutDone');
  });

  /**
   * Every server page's gate: the session (signed out: 403), for a POST the same-origin check and the
   * CSRF token (403), the rights read at most a minute ago and the bot in the server (else 404, with
   * nothing of the server's), then `handle`.
   */
  function guildRoute(
    page: GuildPage,
    method: 'GET' | 'POST',
    path: string,
    handle: (ctx: GuildContext, request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply>,
  ): void {
    const url = `${DASHBOARD_PATH}/:guildId${path}`;
    const handler = async (request: FastifyRequest, reply: FastifyReply) => {
      const guildId = (request.params as { guildId?: string }).guildId ?? '';
      const browserLocale = requestLocale(request);
      if (method === 'POST' && !isSameOrigin(publicUrl, request)) {
        o.logger.warn({ route: url }, 'dashboard request refused: not from this site');
        return message(reply, 403, browserLocale, 'forbidden');
      }
      const viewer = await liveViewer(ends, request, reply);
      const next = `/${guildId}${page}`;
      if (viewer.kind === 'signed_out')
        return message(reply, 403, browserLocale, 'signedOut', { next: GUILD_ID.test(guildId) ? next : '' });
      if (viewer.kind === 'ended') {
        clearSession(rights, reply);
        return message(reply, 403, browserLocale, 'ended', { next: GUILD_ID.test(guildId) ? next : '' });
      }
      if (viewer.kind === 'discord_down') return message(reply, 503, browserLocale, 'discordDown');
      const { session } = viewer;
      const locale = requestLocale(request, session.locale);
      if (method === 'POST' && !isCsrfToken(o.key, session, formOf(request.body).csrf)) {
        o.logger.warn(
          { route: url, userId: session.userId },
          'dashboard request refused: no valid CSRF token',
        );
        return message(reply, 403, locale, 'forbidden', { session });
      }
      const snapshot =
        GUILD_ID.test(guildId) && session.guilds.includes(guildId)
          ? await o.store.getGuildAuthority(guildId)
          : undefined;
      if (!snapshot) {
        if (GUILD_ID.test(guildId))
          o.logger.info(
            { route: url, userId: session.userId, guildId },
            'dashboard: server not in the account’s list',
          );
        return message(reply, 404, locale, 'notFound', { session });
      }
      const standing = await standings.of(guildId, session.userId);
      if (standing !== 'allowed') {
        o.logger.info({ route: url, userId: session.userId, guildId, standing }, 'dashboard: no rights now');
        const [status, what] = STANDING_REFUSALS[standing];
        return message(reply, status, locale, what, { session });
      }
      if (method === 'POST') {
        const wait = await o.limits.dashboardChanges(request, session.userId);
        if (wait !== undefined) {
          reply.header('retry-after', String(wait));
          return message(reply, 429, locale, 'tooManyChanges', { session, seconds: wait });
        }
      }
      const roles = [...snapshot.roles]
        .filter((r) => r.id !== guildId && r.managed !== true)
        .sort((a, b) => b.position - a.position)
        .map((r) => ({ id: r.id, name: r.name }));
      const ctx: GuildContext = {
        session,
        guildId,
        snapshot,
        roles,
        names: {
          roles: new Map(snapshot.roles.map((r) => [r.id, r.name])),
          channels: new Map((snapshot.channels ?? []).map((c) => [c.id, c.name])),
        },
        frame: { ...frameOf(locale, session), guild: { id: guildId, name: snapshot.name ?? guildId, page } },
      };
      return handle(ctx, request, reply);
    };
    if (method === 'GET') app.get(url, handler);
    else app.post(url, { bodyLimit: MAX_FORM_BYTES }, handler);
  }

  const run = (request: WithoutGuild<DashboardRequest>, ctx: GuildContext) =>
    o.operations.run({ ...request, guildId: ctx.guildId } as DashboardRequest);

  // Overview.
  guildRoute('', 'GET', '', async (ctx, request, reply) => {
    const days = Number(new URL(request.url, 'http://x.invalid').searchParams.get('days'));
    const period: ChartDays = (CHART_DAYS as readonly number[]).includes(days) ? (days as ChartDays) : 30;
    const overview = await readOverview(o.store, ctx.guildId, { now: o.now(), days: period, linkedCounts });
    return send(reply, 200, ctx.frame.locale, (nonce) =>
      renderOverview({ frame: ctx.frame, names: ctx.names, overview }, nonce),
    );
  });

  // Rules.
  const rulesPage = async (
    ctx: GuildContext,
    reply: FastifyReply,
    status: number,
    extra: { notice?: string; form?: RuleForm; preview?: Parameters<typeof renderRules>[0]['preview'] } = {},
  ) => {
    const [settings, rules] = await Promise.all([
      o.store.getGuildSettings(ctx.guildId),
      loadRoleRules(o.store, ctx.guildId),
    ]);
    return send(reply, status, ctx.frame.locale, (nonce) =>
      renderRules(
        { frame: ctx.frame, names: ctx.names, settings: settings ?? null, rules, roles: ctx.roles, ...extra },
        nonce,
      ),
    );
  };
  guildRoute('/rules', 'GET', '/rules', (ctx, _request, reply) => rulesPage(ctx, reply, 200));
  guildRoute('/rules', 'POST', '/rules/preview', async (ctx, request, reply) => {
    const f = formOf(request.body);
    const form: RuleForm = {
      roleId: (f.role ?? '').trim(),
      kind: (f.kind ?? '').trim(),
      value: (f.value ?? '').trim(),
      match: f.match === 'all' || f.match === 'any' ? f.match : '',
    };
    const bad = (key: MessageKey) =>
      rulesPage(ctx, reply, 400, { form, notice: notice('error', text(ctx.frame.locale, key)) });
    if (!ctx.roles.some((r) => r.id === form.roleId)) return bad('web.dashboard.bad.role');
    if (!(RULE_KINDS as readonly string[]).includes(form.kind)) return bad('web.dashboard.bad.kind');
    if (form.value === '' || form.value.length > MAX_VALUE) return bad('web.dashboard.bad.value');
    const answer = await run(
      {
        op: 'rulePreview',
        actorId: ctx.session.userId,
        roleId: form.roleId,
        kind: form.kind,
        value: form.value,
        match: (form.match || null) as RuleMatch | null,
      },
      ctx,
    );
    const outcome = ruleOutcome(answer, ctx.names, ctx.frame.locale, waitSeconds);
    return rulesPage(ctx, reply, 200, { form, ...outcome });
  });
  guildRoute('/rules', 'POST', '/rules/apply', async (ctx, request, reply) => {
    const f = formOf(request.body);
    const roleId = (f.role ?? '').trim();
    const condition = (f.condition ?? '').trim();
    if (!ctx.roles.some((r) => r.id === roleId) || condition === '' || condition.length > MAX_RULE_OPTION)
      return rulesPage(ctx, reply, 400, {
        notice: notice('error', text(ctx.frame.locale, 'web.dashboard.bad.role')),
      });
    const match = f.match === 'all' || f.match === 'any' ? f.match : null;
    const answer = await run({ op: 'ruleApply', actorId: ctx.session.userId, roleId, condition, match }, ctx);
    return rulesPage(ctx, reply, 200, ruleOutcome(answer, ctx.names, ctx.frame.locale, waitSeconds));
  });
  guildRoute('/rules', 'POST', '/rules/remove', async (ctx, request, reply) => {
    const rule = (formOf(request.body).rule ?? '').trim();
    if (rule === '' || rule.length > MAX_RULE_OPTION)
      return rulesPage(ctx, reply, 400, {
        notice: notice('error', text(ctx.frame.locale, 'web.dashboard.rules.notFound')),
      });
    const answer = await run({ op: 'ruleRemove', actorId: ctx.session.userId, rule }, ctx);
    return rulesPage(ctx, reply, 200, ruleOutcome(answer, ctx.names, ctx.frame.locale, waitSeconds));
  });

  // Exemptions.
  const exemptionsPage = async (
    ctx: GuildContext,
    reply: FastifyReply,
    status: number,
    extra: { notice?: string; form?: { member: string; roleId: string } } = {},
  ) => {
    const exemptions = await o.store.listExemptions(ctx.guildId);
    return send(reply, status, ctx.frame.locale, (nonce) =>
      renderExemptions({ frame: ctx.frame, names: ctx.names, exemptions, roles: ctx.roles, ...extra }, nonce),
    );
  };
  guildRoute('/exemptions', 'GET', '/exemptions', (ctx, _request, reply) => exemptionsPage(ctx, reply, 200));
  for (const change of ['add', 'remove'] as const) {
    guildRoute('/exemptions', 'POST', `/exemptions/${change}`, async (ctx, request, reply) => {
      const f = formOf(request.body);
      const member = (f.member ?? '').trim();
      const roleId = (f.role ?? '').trim();
      const form = { member, roleId };
      const bad = (key: MessageKey) =>
        exemptionsPage(ctx, reply, 400, { form, notice: notice('error', text(ctx.frame.locale, key)) });
      if ((member === '') === (roleId === '')) return bad('gating.exempt.needsTarget');
      if (member !== '' && !USER_ID.test(member)) return bad('web.dashboard.bad.member');
      // A role no longer in the server can still be lifted from the list.
      if (roleId !== '' && !ctx.names.roles.has(roleId) && !(change === 'remove' && USER_ID.test(roleId)))
        return bad('web.dashboard.bad.role');
      const target =
        member !== ''
          ? ({ kind: 'member', targetId: member } as const)
          : ({ kind: 'role', targetId: roleId } as const);
      const answer = await run(
        { op: change === 'add' ? 'exemptAdd' : 'exemptRemove', actorId: ctx.session.userId, target },
        ctx,
      );
      return exemptionsPage(ctx, reply, 200, {
        notice: exemptOutcome(answer, ctx.names, ctx.frame.locale, waitSeconds),
      });
    });
  }

  // Held removals.
  const heldPage = async (ctx: GuildContext, reply: FastifyReply, extra: { notice?: string } = {}) => {
    const [held, counts] = await Promise.all([
      o.store.listHeldLosses(ctx.guildId, 200),
      o.store.countPendingLosses(ctx.guildId),
    ]);
    return send(reply, 200, ctx.frame.locale, (nonce) =>
      renderHeld({ frame: ctx.frame, names: ctx.names, held, count: counts.held, ...extra }, nonce),
    );
  };
  guildRoute('/held', 'GET', '/held', (ctx, _request, reply) => heldPage(ctx, reply));
  for (const [path, op] of [
    ['confirm', 'confirmRemovals'],
    ['keep', 'keepHeld'],
  ] as const) {
    guildRoute('/held', 'POST', `/held/${path}`, async (ctx, _request, reply) => {
      const answer = await run({ op, actorId: ctx.session.userId }, ctx);
      return heldPage(ctx, reply, { notice: heldOutcome(answer, ctx.frame.locale, waitSeconds) });
    });
  }

  // Audit, and its CSV.
  guildRoute('/audit', 'GET', '/audit', async (ctx, request, reply) => {
    const query = new URL(request.url, 'http://x.invalid').searchParams;
    const { form, filter, error } = auditFilterOf(ctx.guildId, query);
    const before = cursorOf(query.get('before'));
    const after = cursorOf(query.get('after'));
    const view = { frame: ctx.frame, names: ctx.names, roles: ctx.roles, filter: form };
    if (error || !filter || before === null || after === null) {
      const key: MessageKey = error ?? 'web.dashboard.bad.cursor';
      return send(reply, 400, ctx.frame.locale, (nonce) =>
        renderAudit({ ...view, page: null, error: key }, nonce),
      );
    }
    const page = await readAuditPage(
      o.store,
      filter,
      { ...(before ? { before } : {}), ...(after ? { after } : {}) },
      AUDIT_PAGE_SIZE,
    );
    return send(reply, 200, ctx.frame.locale, (nonce) => renderAudit({ ...view, page }, nonce));
  });
  guildRoute('/audit', 'GET', '/audit.csv', async (ctx, request, reply) => {
    const query = new URL(request.url, 'http://x.invalid').searchParams;
    const { form, filter, error } = auditFilterOf(ctx.guildId, query);
    if (error || !filter) {
      const view = { frame: ctx.frame, names: ctx.names, roles: ctx.roles, filter: form, page: null };
      return send(reply, 400, ctx.frame.locale, (nonce) =>
        renderAudit({ ...view, error: error ?? 'web.dashboard.bad.kind' }, nonce),
      );
    }
    const log = o.logger;
    async function* rows(): AsyncIterable<string> {
      yield CSV_BOM + csvRow(AUDIT_COLUMNS);
      try {
        for await (const e of auditEventsOldestFirst(o.store, filter as AuditFilter)) {
          const member = e.kind === 'settings_changed' ? null : e.userId;
          yield csvRow([
            new Date(e.createdAt).toISOString(),
            e.kind,
            member,
            e.roleId,
            e.reason,
            auditActor(e),
          ]);
        }
      } catch (err) {
        log.error({ err, guildId: ctx.guildId }, 'dashboard audit download failed midway');
        throw err;
      }
    }
    return reply
      .code(200)
      .type('text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="audit-${ctx.guildId}.csv"`)
      .send(Readable.from(rows()));
  });

  // Health.
  guildRoute('/health', 'GET', '/health', async (ctx, _request, reply) => {
    const [status, panels] = await Promise.all([
      run({ op: 'status' }, ctx),
      o.store.listVerifyPanels(ctx.guildId),
    ]);
    return send(reply, 200, ctx.frame.locale, (nonce) =>
      renderHealth({ frame: ctx.frame, names: ctx.names, status, panels, waitSeconds }, nonce),
    );
  });
}
