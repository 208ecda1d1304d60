/**
 * The arithmetic of the capacity benchmark (bench/capacity.ts), kept apart so it can be tested: the world
 * each row builds (members, linked memberships and distinct identities per server), the shard layout an
 * operator would run for it, and the straight-line fits the plan (docs/operators/capacity.md) extrapolates
 * with.
 */
import type { GuildShape } from '../fakes/discord/scale.ts';

/** A small community server: 20 members, 4 of them with a proven identity. */
export const CAPACITY_GUILD: GuildShape = {
  members: 20,
  roles: 5,
  channels: 5,
  emojis: 2,
  stickers: 0,
  linked: 4,
};

/** The first linked member of each run of this many servers proves one identity shared between them. */
export const SHARED_EVERY = 10;

/** Servers per shard the layout aims at (Discord allows 2,500; operators keep a margin). */
export const SERVERS_PER_SHARD = 1_250;

export interface WorldRatios {
  members: number;
  /** Linked memberships: what a re-check walks over. */
  memberships: number;
  /** Distinct identities: what a re-check cycle reads upstream, once each. */
  identities: number;
}

/** What `guilds` servers of `shape` hold, with one identity shared by every `sharedEvery` servers. */
export function worldRatios(guilds: number, shape: GuildShape, sharedEvery: number): WorldRatios {
  const shared = Math.min(1, shape.linked);
  return {
    members: guilds * shape.members,
    memberships: guilds * shape.linked,
    identities: guilds * (shape.linked - shared) + shared * Math.ceil(guilds / sharedEvery),
  };
}

export interface ShardLayout {
  shardCount: number;
  /** SHARD_IDS of each of the two shard managers (two machines' halves). */
  halves: [string, string];
}

/** An even shard count of at most SERVERS_PER_SHARD servers each, split in two halves. */
export function shardLayout(guilds: number): ShardLayout {
  const half = Math.max(1, Math.ceil(guilds / (2 * SERVERS_PER_SHARD)));
  const range = (from: number, to: number) => (from === to ? String(from) : `${from}-${to}`);
  return { shardCount: 2 * half, halves: [range(0, half - 1), range(half, 2 * half - 1)] };
}

export interface LinearFit {
  /** Per unit of x. */
  slope: number;
  intercept: number;
}

/** The least-squares line through the points (x: servers, y: a measured figure). */
export function linearFit(points: readonly { x: number; y: number }[]): LinearFit {
  const n = points.length;
  if (n === 0) throw new RangeError('a fit needs at least one point');
  const meanX = points.reduce((sum, p) => sum + p.x, 0) / n;
  const meanY = points.reduce((sum, p) => sum + p.y, 0) / n;
  const sxx = points.reduce((sum, p) => sum + (p.x - meanX) ** 2, 0);
  if (sxx === 0) return { slope: 0, intercept: meanY };
  const slope = points.reduce((sum, p) => sum + (p.x - meanX) * (p.y - meanY), 0) / sxx;
  return { slope, intercept: meanY - slope * meanX };
}

/** The fitted figure at `x`. */
export function atFit(fit: LinearFit, x: number): number {
  return fit.intercept + fit.slope * x;
}
