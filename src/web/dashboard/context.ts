/**
 * What every dashboard route shares, built once per app: the options the app hands down, the rights and
 * sign-out settings, the viewers' standings, and how a page is sent (`send`, `message`, `frameOf`).
 */
import type { FastifyReply } from 'fastify';
import type { DiscordOAuthConfig } from '../../discord/oauth.ts';
import { DASHBOARD_WAIT_MS } from '../../gating/dashboard/requests.ts';
import type { DashboardOperations } from '../../gating/dashboard/types.ts';
import type { GatingStore } from '../../store/types.ts';
import type { WebLimiters } from '../limits.ts';
import type { DashboardFrame } from '../pages/dashboardDocument.ts';
import { type DashboardMessage, renderMessage } from '../pages/dashboardPages.ts';
import { createFormats, type Formats } from '../pages/dashboardParts.ts';
import { publicPath, sendHtml, type WebLogger } from '../responses.ts';
import { RIGHTS_MAX_AGE_MS, type RightsOptions } from './rights.ts';
import { csrfToken, DASHBOARD_PATH, type DashboardSession } from './session.ts';
import type { SignOutOptions } from './signOut.ts';
import { ViewerStandings } from './standing.ts';

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

/** The largest form body a dashboard POST may carry. */
export const MAX_FORM_BYTES = 4_096;
/** Discord's CDN: the only place the pages load images from. */
export const CDN = 'https://cdn.discordapp.com';

export type Form = Record<string, string>;

/** The form's text fields; anything else the body holds (or a body that is not a form) is nothing. */
export function formOf(body: unknown): Form {
  if (typeof body !== 'object' || body === null) return {};
  const form: Form = {};
  for (const [name, value] of Object.entries(body as Record<string, unknown>))
    if (typeof value === 'string') form[name] = value;
  return form;
}

/** What a message page may add: the account shown, where to sign in again, seconds to wait. */
export interface MessageExtra {
  session?: DashboardSession;
  next?: string;
  seconds?: number;
}

/** The context every dashboard route file is registered with (see createDashboardContext). */
export interface DashboardContext extends DashboardRouteOptions {
  publicUrl: string;
  /** PUBLIC_URL's path to the dashboard: the pages' links start here. */
  root: string;
  /** How long a page waits for the owning process, in seconds (said in the timeout notice). */
  waitSeconds: number;
  rights: RightsOptions;
  ends: SignOutOptions;
  standings: ViewerStandings;
  /** Sends a page with the dashboard's headers (same-origin referrer, forms to self, Discord's CDN). */
  send: (
    reply: FastifyReply,
    status: number,
    locale: string,
    render: (nonce: string) => string,
  ) => FastifyReply;
  /** The frame every page is drawn in: the locale's formats, the root, the account if signed in. */
  frameOf: (locale: string, session?: DashboardSession) => DashboardFrame;
  /** Sends a message page (a refusal, an error, signed out…), with a sign-in link where one fits. */
  message: (
    reply: FastifyReply,
    status: number,
    locale: string,
    what: DashboardMessage,
    extra?: MessageExtra,
  ) => FastifyReply;
}

/** Builds what the dashboard's routes share, once: one set of Intl formats per locale, one standings cache. */
export function createDashboardContext(o: DashboardRouteOptions): DashboardContext {
  const publicUrl = o.oauth.publicUrl;
  const root = publicPath(publicUrl, DASHBOARD_PATH);
  const waitMs = o.waitMs ?? DASHBOARD_WAIT_MS;
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
    extra: MessageExtra = {},
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

  return {
    ...o,
    publicUrl,
    root,
    waitSeconds: Math.round(waitMs / 1_000),
    rights,
    ends,
    standings,
    send,
    frameOf,
    message,
  };
}
