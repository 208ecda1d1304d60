/**
 * The owners' dashboard end to end: the real bot (gating and DASHBOARD_ENABLED on) against the stand-in
 * Discord (its OAuth2 with `GET /users/@me/guilds`) and Web3.bio, and a small cookie-keeping HTTP client
 * that plays a browser: it follows Discord's authorize redirect, keeps the cookies each answer sets (by
 * path, as a browser would), and sends forms with the Origin a browser sends.
 */
import { PermissionFlagsBits } from 'discord-api-types/v10';
import { addGuildRole, type GatingHarness, startGating, waitFor } from './gatingHarness.ts';
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

export interface Answer {
  status: number;
  text: string;
  location: string | null;
  headers: Headers;
}

/** One browser profile: its cookies by name (each with its path), following redirects by hand. */
export class TestBrowser {
  readonly cookies = new Map<string, { value: string; path: string }>();
  readonly publicUrl: string;
  /** Where a request to PUBLIC_URL really goes (a load balancer's choice of replica); default PUBLIC_URL. */
  readonly #via: (() => string) | undefined;

  constructor(publicUrl: string, via?: () => string) {
    this.publicUrl = publicUrl;
    this.#via = via;
  }

  #cookieHeader(url: URL): string {
    return [...this.cookies.entries()]
      .filter(([, c]) => url.pathname === c.path || url.pathname.startsWith(`${c.path}/`) || c.path === '/')
      .map(([name, c]) => `${name}=${c.value}`)
      .join('; ');
  }

  #keep(url: URL, headers: Headers): void {
    for (const line of headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';').map((p) => p.trim());
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      const path = attributes.find((a) => a.toLowerCase().startsWith('path='))?.slice(5) ?? url.pathname;
      const maxAge = attributes.find((a) => a.toLowerCase().startsWith('max-age='));
      if (value === '' || maxAge?.toLowerCase() === 'max-age=0') this.cookies.delete(name);
      else this.cookies.set(name, { value, path });
    }
  }

  /** One request as this browser makes it (cookies of this site only), without following redirects. */
  async request(
    url: string,
    init: { method?: string; form?: Record<string, string>; headers?: Record<string, string> } = {},
  ): Promise<Answer> {
    const target = new URL(url, this.publicUrl);
    const ours = target.origin === new URL(this.publicUrl).origin;
    const headers: Record<string, string> = { 'accept-language': 'en-US', ...init.headers };
    const cookie = ours ? this.#cookieHeader(target) : '';
    if (cookie) headers.cookie = cookie;
    let body: string | undefined;
    if (init.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(init.form).toString();
    }
    const sent = ours && this.#via ? new URL(`${target.pathname}${target.search}`, this.#via()) : target;
    const response = await fetch(sent, {
      method: init.method ?? (init.form ? 'POST' : 'GET'),
      headers,
      ...(body === undefined ? {} : { body }),
      redirect: 'manual',
    });
    if (ours) this.#keep(target, response.headers);
    return {
      status: response.status,
      // As the bytes came (a CSV's byte-order mark included).
      text: new TextDecoder('utf-8', { ignoreBOM: true }).decode(await response.arrayBuffer()),
      location: response.headers.get('location'),
      headers: response.headers,
    };
  }

  /** GET, following redirects (to Discord's authorize page and back) as a browser would. */
  async get(url: string, headers: Record<string, string> = {}): Promise<Answer & { url: string }> {
    let current = new URL(url, this.publicUrl).toString();
    for (let hops = 0; hops < 6; hops++) {
      const answer = await this.request(current, { headers });
      if (answer.status < 300 || answer.status >= 400 || !answer.location) return { ...answer, url: current };
      current = new URL(answer.location, current).toString();
    }
    throw new Error(`too many redirects from ${url}`);
  }

  /** A form POST from a page of this site: the Origin header a browser sends, and `sec-fetch-site`. */
  post(path: string, form: Record<string, string>, headers: Record<string, string> = {}): Promise<Answer> {
    return this.request(path, {
      form,
      headers: { origin: new URL(this.publicUrl).origin, 'sec-fetch-site': 'same-origin', ...headers },
    });
  }
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

/** The CSRF token the page's forms carry. */
export function csrfOf(html: string): string {
  const match = /name="csrf" value="([^"]+)"/.exec(html);
  if (!match?.[1]) throw new Error('no CSRF token on the page');
  return match[1];
}

/** The page's visible text, roughly: tags dropped, entities decoded, spaces collapsed. */
export function textOf(html: string): string {
  return html
    .replace(/<style[\s\S]*?<\/style>/g, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)))
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Waits for a condition that changes in the background (a re-check, a queued role change). */
export { waitFor };
