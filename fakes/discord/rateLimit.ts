import type { Answer } from './http.ts';

const ROLE_EDIT_BUCKET = 'f4k3r01e3d1t';
const WINDOW_MS = 1000;

/**
 * A 429 in Discord's format: float `retry_after` seconds in the body, `Retry-After` rounded up to whole
 * seconds, and `X-RateLimit-Remaining: 0` with a float `Reset-After`, which is what @discordjs/rest waits on.
 * @see https://discord.com/developers/docs/topics/rate-limits#exceeding-a-rate-limit
 */
export function tooManyRequests(input: {
  retryAfterSeconds: number;
  bucket?: string;
  limit?: number;
  global?: boolean;
  message?: string;
}): Answer {
  const retryAfter = Math.max(0, input.retryAfterSeconds);
  const global = input.global === true;
  const headers: Record<string, string> = {
    'Retry-After': String(Math.ceil(retryAfter)),
    'X-RateLimit-Limit': String(input.limit ?? 1),
    'X-RateLimit-Remaining': '0',
    'X-RateLimit-Reset': ((Date.now() + retryAfter * 1000) / 1000).toFixed(3),
    'X-RateLimit-Reset-After': retryAfter.toFixed(3),
    'X-RateLimit-Bucket': input.bucket ?? 'f4k3fau1t',
    'X-RateLimit-Scope': global ? 'global' : 'user',
  };
  if (global) headers['X-RateLimit-Global'] = 'true';
  return {
    status: 429,
    headers,
    body: { message: input.message ?? 'You are being rate limited.', retry_after: retryAfter, global },
  };
}

interface Window {
  perSecond: number;
  startedAt: number;
  used: number;
}

/** Per-guild fixed-window limit on member role edits, answering like Discord's per-route bucket. */
export class RoleEditLimiter {
  readonly #windows = new Map<string, Window>();

  /** Sets (or with null removes) the limit for one guild. */
  set(guildId: string, perSecond: number | null): void {
    if (perSecond === null) this.#windows.delete(guildId);
    else this.#windows.set(guildId, { perSecond: Math.max(1, Math.floor(perSecond)), startedAt: 0, used: 0 });
  }

  /** Counts one request: a 429 answer when over the limit, else the headers for the success answer. */
  take(guildId: string, now = Date.now()): { limited: Answer } | { headers: Record<string, string> } | null {
    const window = this.#windows.get(guildId);
    if (!window) return null;
    if (now - window.startedAt >= WINDOW_MS) {
      window.startedAt = now;
      window.used = 0;
    }
    const resetAfterMs = window.startedAt + WINDOW_MS - now;
    if (window.used >= window.perSecond) {
      return {
        limited: tooManyRequests({
          retryAfterSeconds: resetAfterMs / 1000,
          bucket: ROLE_EDIT_BUCKET,
          limit: window.perSecond,
        }),
      };
    }
    window.used += 1;
    return {
      headers: {
        'X-RateLimit-Limit': String(window.perSecond),
        'X-RateLimit-Remaining': String(window.perSecond - window.used),
        'X-RateLimit-Reset': ((window.startedAt + WINDOW_MS) / 1000).toFixed(3),
        'X-RateLimit-Reset-After': (resetAfterMs / 1000).toFixed(3),
        'X-RateLimit-Bucket': ROLE_EDIT_BUCKET,
      },
    };
  }
}

/** One of Discord's per-route buckets: the routes (and methods) sharing it, and its limit per window. */
export interface RouteBucket {
  /** Discord's bucket hash, sent as X-RateLimit-Bucket. */
  bucket: string;
  /** The methods sharing the bucket (default: any). */
  methods?: readonly string[];
  /** The decoded route below /api/v10; its first capture group is the major parameter (a guild or channel id). */
  path: RegExp;
  /** Requests per window, per bot token and major parameter. */
  limit: number;
  windowMs: number;
}

export interface RateLimitOptions {
  /** Requests a second per bot token across every route, as Discord's global limit (null: none). */
  globalPerSecond?: number | null;
  routes?: readonly RouteBucket[];
}

/** The 429s the stand-in answered since `enforce` (each counts toward Discord's invalid-request limit). */
export interface RateLimitCounts {
  global429s: number;
  route429s: number;
}

/** Discord's member-role routes: add and remove share one bucket per guild. */
export function roleEditBucket(limit: number, windowMs: number): RouteBucket {
  return {
    bucket: ROLE_EDIT_BUCKET,
    methods: ['PUT', 'DELETE'],
    path: /^\/guilds\/(\d+)\/members\/\d+\/roles\/\d+$/,
    limit,
    windowMs,
  };
}

/**
 * Discord's rate limits as a client meets them: a global limit per bot token (a fixed second from its
 * first request) and per-route buckets per token and major parameter (a fixed window from the first
 * request), with X-RateLimit-* headers on every answer of a limited route and Discord's 429s beyond them.
 * @see https://discord.com/developers/docs/topics/rate-limits
 */
export class DiscordRateLimits {
  #globalPerSecond: number | null = null;
  #routes: readonly RouteBucket[] = [];
  readonly #windows = new Map<string, { startedAt: number; used: number }>();
  readonly counts: RateLimitCounts = { global429s: 0, route429s: 0 };

  /** Replaces the limits, forgets every window and zeroes the counts. */
  enforce(options: RateLimitOptions): void {
    this.#globalPerSecond = options.globalPerSecond ?? null;
    this.#routes = options.routes ?? [];
    this.#windows.clear();
    this.counts.global429s = 0;
    this.counts.route429s = 0;
  }

  /** Counts one request: a 429 answer when over a limit, else the route's headers for the answer. */
  take(
    request: { method: string; path: string; authorization: string | undefined },
    now = Date.now(),
  ): { limited: Answer } | { headers: Record<string, string> } {
    const token = request.authorization ?? '';
    if (this.#globalPerSecond !== null && token.startsWith('Bot ')) {
      const global = this.#window(`global:${token}`, this.#globalPerSecond, WINDOW_MS, now);
      if (global.over) {
        this.counts.global429s += 1;
        return {
          limited: tooManyRequests({
            retryAfterSeconds: global.resetAfterMs / 1000,
            global: true,
            limit: this.#globalPerSecond,
          }),
        };
      }
    }
    const route = this.#routes.find(
      (r) => (!r.methods || r.methods.includes(request.method)) && r.path.test(request.path),
    );
    if (!route) return { headers: {} };
    const major = route.path.exec(request.path)?.[1] ?? '';
    const window = this.#window(`${token}:${route.bucket}:${major}`, route.limit, route.windowMs, now);
    if (window.over) {
      this.counts.route429s += 1;
      return {
        limited: tooManyRequests({
          retryAfterSeconds: window.resetAfterMs / 1000,
          bucket: route.bucket,
          limit: route.limit,
        }),
      };
    }
    return {
      headers: {
        'X-RateLimit-Limit': String(route.limit),
        'X-RateLimit-Remaining': String(window.remaining),
        'X-RateLimit-Reset': ((now + window.resetAfterMs) / 1000).toFixed(3),
        'X-RateLimit-Reset-After': (window.resetAfterMs / 1000).toFixed(3),
        'X-RateLimit-Bucket': route.bucket,
      },
    };
  }

  /** Takes one request from a fixed window, or says it is over. */
  #window(
    key: string,
    limit: number,
    windowMs: number,
    now: number,
  ): { over: boolean; remaining: number; resetAfterMs: number } {
    let window = this.#windows.get(key);
    if (!window || now - window.startedAt >= windowMs) {
      window = { startedAt: now, used: 0 };
      this.#windows.set(key, window);
    }
    const resetAfterMs = window.startedAt + windowMs - now;
    if (window.used >= limit) return { over: true, remaining: 0, resetAfterMs };
    window.used += 1;
    return { over: false, remaining: limit - window.used, resetAfterMs };
  }
}
