/**
 * Health, readiness and metrics over real HTTP from a started bot (stand-in Discord and Web3.bio,
 * the real Redis where a test sets REDIS_URL).
 */
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { deleteKeys, REDIS_URL } from '../../fakes/localRedis.ts';
import { closeRedisClient, createRedisClient } from '../../src/cache/redisStore.ts';
import { closedPort } from '../cache/storeHarness.ts';
import { ALICE, type Harness, humanRoleSettings, startHarness } from './harness.ts';

const TOKEN = 'metrics-token-0123456789abcdef';
const PREFIX = `web3bio-test:${randomUUID()}:`;
const harnesses: Harness[] = [];

/** A bot with METRICS_TOKEN set (`/readyz` and `/metrics` need it on HTTP_PORT) unless `env` says otherwise. */
async function harness(env: Record<string, string> = {}): Promise<Harness> {
  const started = await startHarness({ env: { METRICS_TOKEN: TOKEN, ...env } });
  harnesses.push(started);
  return started;
}

const AUTH = { headers: { authorization: `Bearer ${TOKEN}` } };

function httpUrl(h: Harness): string {
  if (h.bot.httpUrl === undefined) throw new Error('the bot serves no HTTP');
  return h.bot.httpUrl;
}

afterEach(async () => {
  await Promise.all(harnesses.splice(0).map((h) => h.close()));
});

afterAll(async () => {
  const admin = createRedisClient(REDIS_URL);
  await new Promise((resolve) => admin.once('ready', resolve));
  await deleteKeys(admin, `${PREFIX}*`);
  await closeRedisClient(admin);
});

/** The value of one sample line of a Prometheus text exposition, or undefined. */
function sample(text: string, name: string, labels: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name}{${labels}} `));
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}

describe('GET /healthz, /readyz, /metrics', () => {
  it('says alive and ready, and counts interactions, upstream requests and cache reads', async () => {
    const h = await harness();
    expect(await (await fetch(`${httpUrl(h)}/healthz`)).text()).toBe('ok');
    const ready = await fetch(`${httpUrl(h)}/readyz`, AUTH);
    expect([ready.status, await ready.text()]).toEqual([200, 'ready\n']);

    await h.run('whois', { identity: 'vitalik.eth' });
    await h.run('whois', { identity: 'vitalik.eth' });
    await h.run('whois', { identity: 'not a name' });
    const response = await fetch(`${httpUrl(h)}/metrics`, AUTH);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await response.text();
    expect(sample(text, 'bot_interactions_total', 'command="whois",outcome="ok"')).toBe(2);
    expect(sample(text, 'bot_interactions_total', 'command="whois",outcome="invalid_identity"')).toBe(1);
    expect(sample(text, 'bot_answer_seconds_count', 'command="whois"')).toBe(3);
    expect(sample(text, 'web3bio_requests_total', 'endpoint="profile",status="200"')).toBeGreaterThanOrEqual(
      1,
    );
    expect(sample(text, 'cache_lookups_total', 'tier="all",result="hit"')).toBeGreaterThanOrEqual(1);
    expect(sample(text, 'cache_lookups_total', 'tier="all",result="miss"')).toBeGreaterThanOrEqual(1);
    expect(text).toContain('process_cpu_user_seconds_total');
    expect(text).toContain('# TYPE discord_gateway_ping_seconds gauge');
  });

  it('does not serve unknown paths', async () => {
    const h = await harness();
    expect((await fetch(`${httpUrl(h)}/verify/abc`)).status).toBe(404);
  });

  it('keeps /metrics behind METRICS_TOKEN, and never logs the token', async () => {
    const h = await harness({ METRICS_TOKEN: TOKEN });
    const refused = await fetch(`${httpUrl(h)}/metrics`);
    expect(refused.status).toBe(401);
    expect(await refused.text()).not.toContain(TOKEN);
    const wrong = await fetch(`${httpUrl(h)}/metrics`, { headers: { authorization: `Bearer ${TOKEN}x` } });
    expect(wrong.status).toBe(401);
    const allowed = await fetch(`${httpUrl(h)}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(allowed.status).toBe(200);
    expect(await allowed.text()).toContain('bot_interactions_total');
    expect((await fetch(`${httpUrl(h)}/healthz`)).status).toBe(200);
    expect(JSON.stringify(h.logs)).not.toContain(TOKEN);
  });

  it('without METRICS_TOKEN, serves /readyz and /metrics on no public port, only on a loopback METRICS_PORT (config.test.ts: nothing else starts)', async () => {
    const open = await harness({ METRICS_TOKEN: '' });
    expect((await fetch(`${httpUrl(open)}/healthz`)).status).toBe(200);
    expect((await fetch(`${httpUrl(open)}/metrics`)).status).toBe(404);
    expect((await fetch(`${httpUrl(open)}/readyz`)).status).toBe(404);
    expect(open.logs.some((line) => /\/metrics are off/.test(line.msg ?? ''))).toBe(true);
  });

  it('moves /metrics off the public port to METRICS_HOST:METRICS_PORT', async () => {
    const h = await harness({ METRICS_TOKEN: '', METRICS_HOST: '127.0.0.1', METRICS_PORT: '0' });
    expect((await fetch(`${httpUrl(h)}/metrics`)).status).toBe(404);
    expect((await fetch(`${httpUrl(h)}/healthz`)).status).toBe(200);
    const metricsUrl = h.bot.metricsUrl;
    expect(metricsUrl).toBeDefined();
    expect((await fetch(`${metricsUrl}/metrics`)).status).toBe(200);
  });

  it('with gating on: the signing page keeps HTTP_PORT, and METRICS_PORT serves readiness (store included) and metrics', async () => {
    const h = await harness({
      GATING_ENABLED: 'true',
      PUBLIC_URL: 'https://verify.example.org',
      METRICS_PORT: '0',
      METRICS_TOKEN: TOKEN,
    });
    expect(h.bot.httpUrl).toBeUndefined();
    expect(await (await fetch(`${h.bot.gating?.verifyUrl}/healthz`)).text()).toBe('ok');
    const metricsUrl = h.bot.metricsUrl;
    const ready = await fetch(`${metricsUrl}/readyz`, AUTH);
    expect([ready.status, await ready.text()]).toEqual([200, 'ready\n']);
    const text = await (
      await fetch(`${metricsUrl}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })
    ).text();
    expect(text).toMatch(/^gating_role_queue_depth 0$/m);
    const role = h.discord.addRole(h.guild.id, { name: 'Verified Human', position: 1 });
    const guild = await h.bot.client.guilds.fetch(h.guild.id);
    await guild.members.addRole({ user: ALICE, role: role.id });
    await guild.members.removeRole({ user: ALICE, role: role.id });
    await expect(guild.members.addRole({ user: ALICE, role: '999999999999999999' })).rejects.toThrow();
    const counted = await (
      await fetch(`${metricsUrl}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })
    ).text();
    expect(sample(counted, 'gating_role_edits_total', 'result="added"')).toBe(1);
    expect(sample(counted, 'gating_role_edits_total', 'result="removed"')).toBe(1);
    expect(sample(counted, 'gating_role_edits_total', 'result="unknown"')).toBe(1);
    // A change waiting in the queue (a member who is not in the server yet): depth and age show it.
    await h.bot.gating?.store.enqueueRoleChange({
      guildId: '999999999999999990',
      userId: ALICE,
      roleId: role.id,
      op: 'add',
      reason: 'web3 gating: test',
    });
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const queued = await (
      await fetch(`${metricsUrl}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })
    ).text();
    expect(queued).toMatch(/^gating_role_queue_depth 1$/m);
    expect(Number(/^gating_role_queue_oldest_seconds (\S+)$/m.exec(queued)?.[1])).toBeGreaterThanOrEqual(1);
    await h.bot.gating?.store.close();
    const storeGone = await fetch(`${metricsUrl}/readyz`, AUTH);
    expect([storeGone.status, await storeGone.text()]).toEqual([503, 'not ready: store\n']);
  });

  it('with gating on: counts each guild re-check, the members it evaluated, and how stale the oldest guild is', async () => {
    const h = await harness({
      GATING_ENABLED: 'true',
      PUBLIC_URL: 'https://verify.example.org',
      METRICS_PORT: '0',
    });
    const gating = h.bot.gating;
    if (!gating) throw new Error('gating is off');
    const role = h.discord.addRole(h.guild.id, { name: 'Verified Human', position: 1 });
    await gating.store.saveGuildSettings(humanRoleSettings(h.guild.id, role.id));
    await gating.store.saveLink(
      {
        guildId: h.guild.id,
        userId: ALICE,
        identity: 'vitalik.eth',
        platform: 'ens',
        address: null,
        proofMethod: 'signature',
        provenAt: Date.now(),
      },
      'proven earlier',
    );
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    const scrape = async () => (await fetch(`${h.bot.metricsUrl}/metrics`, AUTH)).text();
    const before = await scrape();
    expect(Number(/^gating_recheck_oldest_seconds (\S+)$/m.exec(before)?.[1])).toBeGreaterThanOrEqual(1);
    const result = await gating.service.guilds.recheckGuild(h.guild.id, { cause: 'ops-test' });
    expect(result.members).toBe(1);
    const after = await scrape();
    expect(sample(after, 'gating_rechecks_total', 'cause="ops-test",outcome="done"')).toBe(1);
    expect(sample(after, 'gating_recheck_members_total', 'cause="ops-test"')).toBe(1);
    expect(sample(after, 'gating_recheck_seconds_count', 'cause="ops-test"')).toBe(1);
    expect(Number(/^gating_recheck_oldest_seconds (\S+)$/m.exec(after)?.[1])).toBeLessThan(1);
  });

  it('stops listening when the bot stops', async () => {
    const h = await harness();
    const url = httpUrl(h);
    await h.bot.stop(1_000);
    await expect(fetch(`${url}/healthz`)).rejects.toThrow();
  });
});

describe('readiness with Redis', () => {
  it('is ready with the real Redis and reports the shared rate limiter', async () => {
    const h = await harness({ REDIS_URL, REDIS_PREFIX: PREFIX, WEB3BIO_RATE_LIMIT: '100/1s' });
    await expect
      .poll(async () => (await fetch(`${httpUrl(h)}/readyz`, AUTH)).status, { timeout: 5_000 })
      .toBe(200);
    await h.run('whois', { identity: `vitalik.eth` });
    const text = await (await fetch(`${httpUrl(h)}/metrics`, AUTH)).text();
    expect(text).toMatch(/^web3bio_rate_limiter_shared 1$/m);
    expect(text).toMatch(/^web3bio_rate_limiter_wait_seconds_count [1-9]/m);
  });

  it('is not ready while Redis is unreachable, says which check failed, and still answers', async () => {
    const port = await closedPort();
    const password = `pw-${randomUUID()}`;
    const h = await harness({
      REDIS_URL: `redis://:${password}@127.0.0.1:${port}`,
      WEB3BIO_RATE_LIMIT: '100/1s',
    });
    const ready = await fetch(`${httpUrl(h)}/readyz`, AUTH);
    expect([ready.status, await ready.text()]).toEqual([503, 'not ready: redis\n']);
    const result = await h.run('whois', { identity: 'vitalik.eth' });
    expect(result.message?.embeds[0]?.title ?? '').toContain('vitalik.eth');
    const text = await (await fetch(`${httpUrl(h)}/metrics`, AUTH)).text();
    expect(text).toMatch(/^web3bio_rate_limiter_shared 0$/m);
    expect(h.logs.some((line) => /rate limit unreachable/.test(line.msg ?? ''))).toBe(true);
    expect(JSON.stringify(h.logs)).not.toContain(password);
  });
});
