/**
 * The dashboard with no per-process session state: two web replicas (INTERACTIONS=http, PROCESS_ROLE=web)
 * and the one gateway worker on one PostgreSQL. A browser whose every request goes to the other replica
 * (a round-robin load balancer) starts the sign-in on one and finishes it on the other, reads the pages
 * from both, and adds a rule whose dry run and Apply run in the worker (the replicas have no gateway
 * state: their requests cross through the store).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../fakes/localPostgres.ts';
import {
  CLIENT_SECRET,
  csrfOf,
  ENCRYPTION_KEY,
  TestBrowser,
  textOf,
  untilSnapshot,
} from './dashboardHarness.ts';
import {
  addGuildRole,
  addIdentity,
  addMember,
  closeGating,
  type GatingHarness,
  hasRole,
  setup,
  startGating,
  verifyByRecord,
  waitFor,
} from './gatingHarness.ts';
import { type Replica, startReplica } from './replicaHarness.ts';
import { scoreOf } from './ruleShortcuts.ts';

const PUBLIC_URL = 'https://dashboard.example.test';

describe('the dashboard on two web replicas and a gateway worker (PostgreSQL)', () => {
  let db: Awaited<ReturnType<typeof createDatabase>>;
  let g: GatingHarness;
  const replicas: Replica[] = [];
  const served: string[] = [];

  beforeAll(async () => {
    db = await createDatabase('dashboard_replicas');
    const shared = {
      INTERACTIONS: 'http',
      DATABASE_URL: db.url,
      DASHBOARD_ENABLED: 'true',
      DISCORD_CLIENT_SECRET: CLIENT_SECRET,
      TOKEN_ENCRYPTION_KEY: ENCRYPTION_KEY,
      PUBLIC_URL,
      REDIS_URL: 'redis://127.0.0.1:6379',
      REDIS_PREFIX: `dashboard-replicas-${process.pid}-${Date.now()}:`,
    };
    g = await startGating({
      discord: { clientSecret: CLIENT_SECRET },
      env: { ...shared, PROCESS_ROLE: 'gateway', LOG_LEVEL: 'info' },
    });
    g.h.discord.oauth.allowRedirect(`${PUBLIC_URL}/dashboard/callback`);
    for (let i = 0; i < 2; i++)
      replicas.push(
        await startReplica(g.h.discord, g.h.upstream, {
          ...shared,
          PROCESS_ROLE: 'web',
          GATING_ENABLED: 'true',
          USER_COOLDOWN_COMMANDS: '100',
        }),
      );
    // Discord POSTs the slash commands the test plays (setup, verify) to a replica.
    g.h.discord.useInteractionsEndpoint(`${replicas[0]?.replica.url}/interactions`);
    await untilSnapshot(g, g.guildId, [g.humanRoleId, g.spamRoleId]);
  }, 60_000);
  afterAll(async () => {
    for (const r of replicas) await r.close();
    await closeGating();
    await db?.drop();
  });

  it('signs in through one replica and works through the other, the rule’s dry run and Apply run in the worker', async () => {
    await setup(g);
    const scorer = await addMember(g, 'scorer');
    addIdentity(g, 'scorer.eth', { discordHandle: 'scorer' });
    scoreOf(g, 'scorer.eth', 50);
    await verifyByRecord(g, 'scorer.eth', scorer);
    const trusted = await addGuildRole(g, 'Trusted', 4);
    await untilSnapshot(g, g.guildId, [trusted]);

    let turn = 0;
    const browser = new TestBrowser(PUBLIC_URL, () => {
      const url = replicas[turn++ % replicas.length]?.replica.url ?? '';
      served.push(url);
      return url;
    });
    g.h.discord.oauth.signInAs(g.ownerId);
    // /dashboard on replica 0 (the state stored), /dashboard/callback on replica 1, /dashboard on 0 again.
    const list = await browser.get('/dashboard');
    expect(list.status).toBe(200);
    expect(textOf(list.text)).toContain('E2E Guild');
    expect(new Set(served.slice(0, 3))).toEqual(new Set(replicas.map((r) => r.replica.url)));

    const base = `/dashboard/${g.guildId}`;
    const overview = await browser.get(base);
    expect(textOf(overview.text)).toMatch(/Members with a proven identity 1 /);
    const rules = await browser.get(`${base}/rules`);
    const csrf = csrfOf(rules.text);
    const preview = await browser.post(`${base}/rules/preview`, {
      csrf,
      role: trusted,
      kind: 'score',
      value: '40',
    });
    expect(textOf(preview.text)).toMatch(/Of 1 member with proven identities, 1 would gain Trusted/);
    const apply = Object.fromEntries(
      [...preview.text.matchAll(/<input type="hidden" name="(role|condition|match)" value="([^"]*)">/g)].map(
        (m) => [m[1], m[2]],
      ),
    ) as Record<string, string>;
    const applied = await browser.post(`${base}/rules/apply`, { csrf, ...apply });
    expect(textOf(applied.text)).toContain('Stored for Trusted');
    await waitFor(() => hasRole(g, scorer, trusted), 'the rule role from the worker', 15_000);
    const health = await browser.get(`${base}/health`);
    expect(textOf(health.text)).toContain('No problem found');

    // The replicas ran nothing themselves: the worker answered each request from the store.
    const answered = g.h.logs.filter((l) => l.msg === 'dashboard request answered').map((l) => l.op);
    expect(answered).toEqual(expect.arrayContaining(['rulePreview', 'ruleApply', 'status']));
    // Every replica served pages, with the one cookie: no session lives in a process.
    for (const r of replicas) expect(served).toContain(r.replica.url);
    expect(served.length).toBeGreaterThanOrEqual(8);
  });
});
