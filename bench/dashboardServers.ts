/**
 * The server process of the dashboard benchmark (bench/dashboard.ts): a PostgreSQL database of its own
 * seeded with one server of 100,000 linked members and 1,000,000 audit events over 90 days (their daily
 * counts made by the store's own rollup SQL), the bot's web app with the dashboard on (its real defaults,
 * the per-client limit raised out of reach), and a bare `node:http` server answering the overview with
 * the same store reads and the same render. A stand-in Discord signs the bench in. The load comes from
 * the parent process.
 *
 * IPC: sends `{ type: 'ready', … }` once both listen; `{ type: 'memory' }` answers RSS and the heap after
 * a full GC (this process runs with --expose-gc); `{ type: 'stop' }` closes everything and exits.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { startFakeDiscord } from '../fakes/discord/server.ts';
import { createDatabase } from '../fakes/localPostgres.ts';
import { freePort } from '../fakes/namedPort.ts';
import { LinkedCounts, readAuditPage, readOverview } from '../src/gating/dashboard/reads.ts';
import { AUDIT_METRIC_SQL, DAY_MS } from '../src/store/auditMetric.ts';
import { openPostgresStore } from '../src/store/postgresStore.ts';
import { renderOverview } from '../src/web/pages/dashboardOverview.ts';
import { createFormats } from '../src/web/pages/dashboardParts.ts';
import { startWebServer } from '../src/web/server.ts';

export const MEMBERS = 100_000;
export const EVENTS = 1_000_000;
const KEY = randomBytes(32);
const SECRET = 'bench-dashboard-client-secret';

export interface DashboardServers {
  appUrl: string;
  bareUrl: string;
  guildId: string;
  /** The session cookie (`name=value`) a signed-in owner's browser sends. */
  cookie: string;
  /** The audit page's first page and its 50th (a keyset cursor 49 pages back). */
  auditFirst: string;
  auditFiftieth: string;
  seedSeconds: number;
}

export type DashboardServersMessage =
  | { type: 'ready'; servers: DashboardServers }
  | { type: 'memory'; rss: number; heapAfterGc: number; external: number; arrayBuffers: number };

async function seed(url: string, guildId: string, roles: { human: string; spam: string }): Promise<void> {
  const db = new pg.Pool({ connectionString: url, max: 1 });
  const now = Date.now();
  try {
    await db.query(
      `INSERT INTO guild_settings (guild_id, enabled, human_role_id, spam_role_id, risky_role_id, min_score,
         spam_removes_human, log_channel_id, min_account_age_days, updated_at)
       VALUES ($1, TRUE, $2, $3, NULL, 20, TRUE, NULL, 7, $4)`,
      [guildId, roles.human, roles.spam, now],
    );
    await db.query(
      `INSERT INTO links (guild_id, user_id, identity, platform, address, proof_method, proven_at)
       SELECT $1, (400000000000000000 + i)::text, 'member' || i || '.eth', 'ens', NULL, 'record',
              $2::bigint - (i % 90)::bigint * 86400000
       FROM generate_series(1, $3::int) i`,
      [guildId, now, MEMBERS],
    );
    // A million events over 90 days, the kinds gating writes, oldest first by id.
    await db.query(
      `INSERT INTO audit_events (guild_id, user_id, kind, role_id, reason, details, created_at)
       SELECT $1, (400000000000000000 + (i % $4::int))::text,
              (ARRAY['role_added','linked','role_removed','role_added','unlinked','role_failed'])[1 + i % 6],
              CASE WHEN i % 6 IN (0, 2, 3) THEN (CASE WHEN i % 50 = 0 THEN $5 ELSE $6 END) ELSE NULL END,
              'web3 gating: bench event ' || i, NULL,
              $2::bigint - 90::bigint * 86400000 + (i::bigint * 90::bigint * 86400000 / $3::bigint)
       FROM generate_series(1, $3::int) i`,
      [guildId, now, EVENTS, MEMBERS, roles.spam, roles.human],
    );
    for (let day = 89; day >= 0; day -= 1) {
      await db.query(
        `INSERT INTO audit_events (guild_id, kind, reason, details, created_at)
         VALUES ($1, 'recheck_pass', 'whole-server re-check (periodic)', $2, $3)`,
        [
          guildId,
          JSON.stringify({ members: MEMBERS, holders: { human: 61_234, flagged: 812 } }),
          now - day * DAY_MS,
        ],
      );
    }
    // The daily counts, by the store's own rule (the migration's backfill): no event is read per page.
    await db.query(
      `INSERT INTO audit_daily (guild_id, metric, day, count)
       SELECT e.guild_id, ${AUDIT_METRIC_SQL}, e.created_at / ${DAY_MS}, COUNT(*) FROM audit_events e GROUP BY 1, 2, 3`,
    );
    await db.query(
      `INSERT INTO upstream_minutes (minute, requests, errors, seconds, slow)
       SELECT m, 40, m % 7, 9.5, m % 3 FROM generate_series($1::bigint - 1439, $1::bigint) m`,
      [Math.floor(now / 60_000)],
    );
    await db.query(
      `INSERT INTO pending_losses (guild_id, user_id, subject, first_seen_at, reason, held_at)
       SELECT $1, (400000000000000000 + i)::text, 'role:' || $2, $3::bigint, 'no unexpired isHuman credential', $3::bigint
       FROM generate_series(1, 300) i`,
      [guildId, roles.human, now],
    );
    await db.query('VACUUM ANALYZE');
  } finally {
    await db.end();
  }
}

async function start(): Promise<{ servers: DashboardServers; close: () => Promise<void> }> {
  const started = performance.now();
  const discord = await startFakeDiscord({ clientSecret: SECRET });
  const guild = discord.addGuild({ name: 'Bench Guild' });
  const human = discord.addRole(guild.id, { name: 'Verified Human', position: 2 });
  const spam = discord.addRole(guild.id, { name: 'Spam', position: 3 });
  for (let i = 0; i < 40; i++) discord.addRole(guild.id, { name: `role ${i}`, position: 4 + i });
  const database = await createDatabase('bench_dashboard');
  const store = await openPostgresStore(database.url);
  await seed(database.url, guild.id, { human: human.id, spam: spam.id });
  await store.saveGuildAuthority({
    guildId: guild.id,
    ownerId: guild.ownerId,
    name: guild.name,
    icon: null,
    channels: [...guild.channels.values()].map((c) => ({ id: c.id, name: c.name ?? '' })),
    roles: [...guild.roles.values()].map((r) => ({
      id: r.id,
      name: r.name,
      position: r.position,
      permissions: BigInt(r.permissions),
      managed: r.managed,
    })),
  });
  const seedSeconds = (performance.now() - started) / 1_000;

  const port = await freePort();
  const publicUrl = `http://127.0.0.1:${port}`;
  discord.oauth.allowRedirect(`${publicUrl}/dashboard/callback`);
  const oauth = { clientId: discord.applicationId, clientSecret: SECRET, apiUrl: discord.apiUrl, publicUrl };
  const app = await startWebServer({
    port,
    host: '127.0.0.1',
    store,
    siwe: { publicUrl },
    onVerified: async () => ({ ok: true }),
    limits: { requestsPerClientPerMinute: 1e9 },
    dashboard: { store, oauth, key: KEY, operations: { run: async () => ({ kind: 'timeout' }) } },
  });

  // Signed in as the owner through the app's own routes and the stand-in's authorize page.
  discord.oauth.signInAs(guild.ownerId);
  const start = await fetch(`${app.url}/dashboard`, { redirect: 'manual' });
  const stateCookie = (start.headers.getSetCookie()[0] ?? '').split(';')[0] ?? '';
  const back = await fetch(start.headers.get('location') ?? '', { redirect: 'manual' });
  const callback = await fetch(back.headers.get('location') ?? '', {
    redirect: 'manual',
    headers: { cookie: stateCookie },
  });
  const cookie =
    (callback.headers.getSetCookie().find((c) => c.startsWith('dashboard_session=')) ?? '').split(';')[0] ??
    '';
  if (!cookie) throw new Error('the bench could not sign in');

  // The bare server: the same reads (snapshot and overview, the linked count reused as the app does) and
  // the same page, without the framework, the session or the rights.
  const linkedCounts = new LinkedCounts();
  const formats = createFormats('en-US');
  const bare = createServer((_request: IncomingMessage, response: ServerResponse) => {
    void (async () => {
      const nonce = randomBytes(16).toString('base64');
      const [snapshot, overview] = await Promise.all([
        store.getGuildAuthority(guild.id),
        readOverview(store, guild.id, { now: Date.now(), days: 30, linkedCounts }),
      ]);
      if (!snapshot) throw new Error('no snapshot');
      const html = renderOverview(
        {
          frame: {
            locale: 'en-US',
            formats,
            root: '/dashboard',
            account: { username: 'guild-owner', csrf: 'x'.repeat(43) },
            guild: { id: guild.id, name: snapshot.name ?? '', page: '' },
          },
          names: {
            roles: new Map(snapshot.roles.map((r) => [r.id, r.name])),
            channels: new Map((snapshot.channels ?? []).map((c) => [c.id, c.name])),
          },
          overview,
        },
        nonce,
      );
      response.writeHead(200, {
        'content-type': 'text/html; charset=utf-8',
        'content-security-policy': `default-src 'none'; style-src 'nonce-${nonce}'`,
        'cache-control': 'no-store',
      });
      response.end(html);
    })().catch((error: unknown) => {
      response.writeHead(500);
      response.end(String(error));
    });
  });
  await new Promise<void>((resolve) => bare.listen(0, '127.0.0.1', resolve));
  const bareUrl = `http://127.0.0.1:${(bare.address() as AddressInfo).port}`;

  // The 50th page of the audit log: 49 keyset steps back from the newest.
  let older = (await readAuditPage(store, { guildId: guild.id }, {})).older;
  for (let page = 2; page < 50 && older; page++)
    older = (await readAuditPage(store, { guildId: guild.id }, { before: older })).older;
  if (!older) throw new Error('fewer than 50 audit pages');
  const auditFirst = `/dashboard/${guild.id}/audit`;
  const auditFiftieth = `${auditFirst}?before=${older.createdAt}.${older.id}`;

  return {
    servers: { appUrl: app.url, bareUrl, guildId: guild.id, cookie, auditFirst, auditFiftieth, seedSeconds },
    async close() {
      await app.close();
      await new Promise((resolve) => bare.close(resolve));
      await store.close();
      await database.drop();
      await discord.close();
    },
  };
}

if (import.meta.main) {
  const { servers, close } = await start();
  process.send?.({ type: 'ready', servers } satisfies DashboardServersMessage);
  process.on('message', (message: { type: string }) => {
    if (message.type === 'memory') {
      (globalThis as { gc?: () => void }).gc?.();
      const used = process.memoryUsage();
      process.send?.({
        type: 'memory',
        rss: used.rss,
        heapAfterGc: used.heapUsed,
        external: used.external,
        arrayBuffers: used.arrayBuffers,
      } satisfies DashboardServersMessage);
    } else if (message.type === 'stop') {
      void close().finally(() => process.exit(0));
    }
  });
}
