/**
 * The capacity benchmark's pure parts (issue #37): the world's ratios, the shard layout, the fits the
 * plan extrapolates with, and the distinct interactions POSTed to the replicas.
 */
import { describe, expect, it } from 'vitest';
import { distinctInteractions, recheckHours, routesBetween } from '../../bench/capacity.ts';
import { atFit, CAPACITY_GUILD, linearFit, shardLayout, worldRatios } from '../../bench/capacityPlan.ts';
import { worldIdentity } from '../../bench/guildScaleWorld.ts';

describe('the world of a row', () => {
  it('counts members, linked memberships and distinct identities with one identity shared per run of servers', () => {
    expect(worldRatios(2_500, CAPACITY_GUILD, 10)).toEqual({
      members: 50_000,
      memberships: 10_000,
      identities: 2_500 * 3 + 250,
    });
    // A partial run of servers still has its shared identity.
    expect(worldRatios(25, { ...CAPACITY_GUILD, linked: 2 }, 10).identities).toBe(25 + 3);
    expect(worldRatios(10, { ...CAPACITY_GUILD, linked: 0 }, 10)).toMatchObject({ identities: 0 });
  });

  it('gives the first linked member of each run of servers the shared identity, every other member its own', () => {
    const identities = Array.from({ length: 25 }, (_, guild) =>
      Array.from({ length: 4 }, (_, index) => worldIdentity(guild, index, `${guild}-${index}`, 10)),
    ).flat();
    expect(new Set(identities).size).toBe(worldRatios(25, CAPACITY_GUILD, 10).identities);
    expect(worldIdentity(9, 0, 'u', 10)).toBe(worldIdentity(0, 0, 'v', 10));
    expect(worldIdentity(10, 0, 'u', 10)).not.toBe(worldIdentity(9, 0, 'u', 10));
    expect(worldIdentity(3, 0, '42', undefined)).toBe('scale42.eth');
  });
});

describe('the layout of a row', () => {
  it('runs an even number of shards of at most 1,250 servers each, split into two SHARD_IDS halves', () => {
    expect(shardLayout(250)).toEqual({ shardCount: 2, halves: ['0', '1'] });
    expect(shardLayout(2_500)).toEqual({ shardCount: 2, halves: ['0', '1'] });
    expect(shardLayout(2_501)).toEqual({ shardCount: 4, halves: ['0-1', '2-3'] });
    expect(shardLayout(25_000)).toEqual({ shardCount: 20, halves: ['0-9', '10-19'] });
  });

  it('re-checks every twice the time the member-list walks take at 40 a second, and at least every 3 minutes', () => {
    expect(recheckHours(250)).toBe(0.05);
    expect(recheckHours(36_000) * 3_600).toBeCloseTo(1_800);
  });
});

describe('the fits the plan extrapolates with', () => {
  it('puts the least-squares line through the points', () => {
    const fit = linearFit([
      { x: 2_500, y: 300 },
      { x: 10_000, y: 600 },
      { x: 25_000, y: 1_200 },
    ]);
    expect(fit.slope).toBeCloseTo(0.04);
    expect(fit.intercept).toBeCloseTo(200);
    expect(atFit(fit, 100_000)).toBeCloseTo(4_200);
    const noisy = linearFit([
      { x: 0, y: 1 },
      { x: 1, y: 2 },
      { x: 2, y: 2 },
    ]);
    expect(noisy.slope).toBeCloseTo(0.5);
    expect(noisy.intercept).toBeCloseTo(7 / 6);
  });

  it('takes one point, or points at one x, as a flat line through their mean', () => {
    expect(linearFit([{ x: 5, y: 3 }])).toEqual({ slope: 0, intercept: 3 });
    expect(
      linearFit([
        { x: 5, y: 3 },
        { x: 5, y: 5 },
      ]),
    ).toEqual({ slope: 0, intercept: 4 });
    expect(() => linearFit([])).toThrow(RangeError);
  });
});

it('makes each interaction a delivery of its own: the id and the token counted up, the rest the same', () => {
  const template = JSON.stringify({ id: '1000', token: 'fake-interaction.1000.ab', data: { name: 'whois' } });
  const bodies = distinctInteractions(template, 3).map((b) => JSON.parse(b) as Record<string, unknown>);
  expect(bodies.map((b) => [b.id, b.token])).toEqual([
    ['1000', 'fake-interaction.1000.ab'],
    ['1001', 'fake-interaction.1001.ab'],
    ['1002', 'fake-interaction.1002.ab'],
  ]);
  expect(bodies.every((b) => JSON.stringify(b.data) === '{"name":"whois"}')).toBe(true);
});

it("counts each route's requests between two readings, most first, leaving out routes not used meanwhile", () => {
  const before = { 'GET /gateway/bot': 2, 'GET /guilds/:id/members': 10 };
  const after = { 'GET /gateway/bot': 2, 'GET /guilds/:id/members': 260, 'GET /guilds/:id/members/:id': 3 };
  expect(routesBetween(before, after)).toEqual([
    ['GET /guilds/:id/members', 250],
    ['GET /guilds/:id/members/:id', 3],
  ]);
});
