/**
 * `PUBLIC_URL/dashboard`: the owners' dashboard. Discord sign-in (`identify guilds`, a single-use state
 * stored by its hash and bound to the browser by a cookie), the sealed session (session.ts), the rights
 * on every request (rights.ts: Manage Server or Administrator at server level, and the bot in the
 * server; anything else is a 404 with none of the server's data), and the pages. Reads come from the
 * shared store in whichever process serves the page; what needs the gateway's guild state goes to the
 * process that owns the guild (`operations`), which checks the change rights itself. Every POST must come
 * from this site (same-origin check) with the session's CSRF token, else 403 and nothing changes.
 *
 * One file per resource, each registered with the context built here once (context.ts); every server
 * page passes the gate in guildGate.ts first.
 */
import type { FastifyInstance } from 'fastify';
import { registerAuditRoutes } from './auditRoutes.ts';
import { createDashboardContext, type DashboardRouteOptions } from './context.ts';
import { registerExemptionsRoutes } from './exemptionsRoutes.ts';
import { registerHealthRoutes } from './healthRoutes.ts';
import { registerHeldRoutes } from './heldRoutes.ts';
import { registerOverviewRoutes } from './overviewRoutes.ts';
import { registerRulesRoutes } from './rulesRoutes.ts';
import { registerSignInRoutes } from './signInRoutes.ts';

export type { DashboardRouteOptions, DashboardSetup } from './context.ts';

/** Registers every dashboard route on `app` (a scope with the cookie and form parsers). */
export function registerDashboardRoutes(app: FastifyInstance, o: DashboardRouteOptions): void {
  const dash = createDashboardContext(o);
  registerSignInRoutes(app, dash);
  registerOverviewRoutes(app, dash);
  registerRulesRoutes(app, dash);
  registerExemptionsRoutes(app, dash);
  registerHeldRoutes(app, dash);
  registerAuditRoutes(app, dash);
  registerHealthRoutes(app, dash);
}
