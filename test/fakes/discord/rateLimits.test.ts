import { describe, expect, it } from 'vitest';
import { DiscordRateLimits, roleEditBucket } from '../../../fakes/discord/rateLimit.ts';

const BOT = 'Bot the-token';
const edit = (guildId: string, authorization: string | null = BOT) => ({
  method: 'PUT',
  path: `/guilds/${guildId}/members/2/roles/3`,
  authorization: authorization ?? undefined,
});

describe('DiscordRateLimits (the stand-in’s global limit and per-route buckets)', () => {
  it('answers the 51st request of a second per bot token with a global 429, as Discord does', () => {
    const limits = new DiscordRateLimits();
    limits.enforce({ globalPerSecond: 50 });
    const now = 1_000_000;
    for (let index = 0; index < 50; index += 1)
      expect(limits.take({ method: 'GET', path: `/channels/${index}`, authorization: BOT }, now)).toEqual({
        headers: {},
      });
    const over = limits.take({ method: 'GET', path: '/users/@me', authorization: BOT }, now + 400);
    expect(over).toMatchObject({
      limited: {
        status: 429,
        headers: { 'X-RateLimit-Global': 'true', 'X-RateLimit-Scope': 'global', 'Retry-After': '1' },
        body: { retry_after: 0.6, global: true },
      },
    });
    // Another token, and requests with no bot token (interaction callbacks), have budgets of their own.
    expect(limits.take(edit('1', 'Bot another'), now + 400)).toEqual({ headers: {} });
    expect(limits.take(edit('1', null), now + 400)).toEqual({ headers: {} });
    expect(limits.take({ method: 'GET', path: '/users/@me', authorization: BOT }, now + 1_000)).toEqual({
      headers: {},
    });
    expect(limits.counts).toEqual({ global429s: 1, route429s: 0 });
  });

  it('keeps a bucket per guild with Discord’s headers, PUT and DELETE sharing it', () => {
    const limits = new DiscordRateLimits();
    limits.enforce({ routes: [roleEditBucket(2, 1_000)] });
    const now = 5_000_000;
    expect(limits.take(edit('1'), now)).toEqual({
      headers: {
        'X-RateLimit-Limit': '2',
        'X-RateLimit-Remaining': '1',
        'X-RateLimit-Reset': '5001.000',
        'X-RateLimit-Reset-After': '1.000',
        'X-RateLimit-Bucket': 'f4k3r01e3d1t',
      },
    });
    expect(limits.take({ ...edit('1'), method: 'DELETE' }, now + 100)).toMatchObject({
      headers: { 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset-After': '0.900' },
    });
    expect(limits.take(edit('1'), now + 250)).toMatchObject({
      limited: {
        status: 429,
        headers: { 'X-RateLimit-Bucket': 'f4k3r01e3d1t', 'X-RateLimit-Scope': 'user' },
        body: { retry_after: 0.75, global: false },
      },
    });
    expect(limits.take(edit('2'), now + 250)).toMatchObject({ headers: { 'X-RateLimit-Remaining': '1' } });
    expect(limits.take(edit('1'), now + 1_000)).toMatchObject({ headers: { 'X-RateLimit-Remaining': '1' } });
    expect(limits.counts).toEqual({ global429s: 0, route429s: 1 });
    limits.enforce({});
    expect(limits.counts).toEqual({ global429s: 0, route429s: 0 });
    expect(limits.take(edit('1'), now + 1_001)).toEqual({ headers: {} });
  });
});
