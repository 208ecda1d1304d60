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
