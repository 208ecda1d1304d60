/**
 * The owners' dashboard end to end: the real bot (gating and DASHBOARD_ENABLED on) against the stand-in
 * Discord (its OAuth2 with `GET /users/@me/guilds`) and Web3.bio, and a small cookie-keeping HTTP client
 * that plays a browser: it follows Discord's authorize redirect, keeps the cookies each answer sets (by
 * path, as a browser would), and sends forms with the Origin a browser sends.
 */
import { PermissionFlagsBits } from 'discord-api-types/v10';
import { type Answer, TestBrowser } from '../testBrowser.ts';
import { addGuildRole, type GatingHarness, setup, startGating, waitFor } from './gatingHarness.ts';
import type { HarnessOptions } from './harness.ts';
import { freePort } from './processes.ts';

export const CLIENT_SECRET = 'dashboard-client-secret-0123456789';
export const ENCRYPTION_KEY = 'cd'.repeat(32);

export interface Dashboard {
  g: GatingHarness;
  publicUrl: string;
}

/** The bot with the dashboard on, PUBLIC_URL where this machine reaches it, and the redirect registered. */
export async function startDashboard(options: HarnessOptions = {}): Promise<Dashboard> {
  const port = await freePort();
  const publicUrl = `http://127.0.0.1:${port}`;
  const g = await startGating({
    ...options,
    discord: { clientSecret: CLIENT_SECRET, ...options.discord },
    env: {
      DASHBOARD_ENABLED: 'true',
      DISCORD_CLIENT_SECRET: CLIENT_SECRET,
      TOKEN_ENCRYPTION_KEY: ENCRYPTION_KEY,
      PUBLIC_URL: publicUrl,
      HTTP_PORT: String(port),
      ...options.env,
    },
  });
  g.h.discord.oauth.allowRedirect(`${publicUrl}/dashboard/callback`);
  await untilSnapshot(g, g.guildId, [g.humanRoleId, g.spamRoleId]);
  return { g, publicUrl };
}

/** A rights' age (DASHBOARD_RIGHTS_SECONDS) short enough to wait out in a test: 60 s at most in production. */
export const RIGHTS_SECONDS = 3;

/**
 * The dashboard of a server named 'Server A', set up for gating, with a role of admins (Manage Server and
 * Manage Roles, position 5); rights read at most `rightsSeconds` ago. `base` is the server's pages' path.
 */
export async function startServerA(
  rightsSeconds: number,
): Promise<{ d: Dashboard; base: string; admins: string }> {
  const d = await startDashboard({
    guild: { name: 'Server A' },
    env: { DASHBOARD_RIGHTS_SECONDS: String(rightsSeconds) },
  });
  await setup(d.g);
  return { d, base: `/dashboard/${d.g.guildId}`, admins: await adminRole(d.g, 5) };
}

/** Waits until the gateway side has stored the server's snapshot (the bot is in it) with these roles. */
export async function untilSnapshot(
  g: GatingHarness,
  guildId: string,
  roleIds: string[] = [],
): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const snapshot = await g.gating.store.getGuildAuthority(guildId);
    if (snapshot && roleIds.every((id) => snapshot.roles.some((r) => r.id === id))) return;
    if (Date.now() > deadline) throw new Error(`no snapshot of ${guildId}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A role with Manage Server and Manage Roles at `position` (below the bot's role), once the bot has it. */
export async function adminRole(g: GatingHarness, position = 5): Promise<string> {
  const id = await addGuildRole(
    g,
    'Admins',
    position,
    PermissionFlagsBits.ManageGuild | PermissionFlagsBits.ManageRoles,
  );
  await untilSnapshot(g, g.guildId, [id]);
  return id;
}

/** Signs in as `userId` through the stand-in Discord, landing on `/dashboard` (or `next`). */
export async function signIn(
  d: Dashboard,
  userId: string,
  path = '/dashboard',
): Promise<TestBrowser & { page: Answer }> {
  d.g.h.discord.oauth.signInAs(userId);
  const browser = new TestBrowser(d.publicUrl);
  const page = await browser.get(path);
  if (page.status !== 200)
    throw new Error(`sign-in as ${userId} ended with ${page.status}: ${page.text.slice(0, 300)}`);
  return Object.assign(browser, { page });
}

/** `userId` signed in (`mod`), and a second browser holding a copy of its cookies: what an attacker took. */
export async function signInWithCopy(d: Dashboard, userId: string) {
  const mod = await signIn(d, userId);
  const copy = new TestBrowser(d.publicUrl);
  for (const [name, value] of mod.cookies) copy.cookies.set(name, { ...value });
  return { mod, copy };
}

export { type Answer, csrfOf, TestBrowser, textOf } from '../testBrowser.ts';

/** Waits for a condition that changes in the background (a re-check, a queued role change). */
export { waitFor };
