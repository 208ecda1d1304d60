/**
 * A stand-in for the Web3.bio Profile API on node:http, for tests, benchmarks and offline runs.
 * It follows /work/shared/spec/identity-profile-api.md and, in 'live' mode, the deviations described in
 * /work/shared/spec/real-server-notes.md.
 */
import { createServer, type IncomingMessage, type ServerResponse, STATUS_CODES } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { seedDefaultWorld } from './seed.ts';
import { FakeWorld, INVALID_IDENTITY, type Lookup, NOT_FOUND, type ProfileView } from './world.ts';

export interface FakeWeb3BioOptions {
  host?: string;
  port?: number;
  /** 'live' (default): error bodies {identity,path,platform,error}, bad key -> 403 {"error":"Forbidden","message":...},
   *  avatar -> 307 Location / SVG when none / HTTP-200 JSON {identity,platform,message,code} on lookup error.
   *  'spec': error bodies {address:null,identity,platform,error}, bad key -> 401, avatar -> 200 text/plain URL. */
  mode?: 'live' | 'spec';
  /** Valid API keys and their permission; 'full' can call /wallet, 'basic' gets 403 "Insufficient permissions" there. */
  apiKeys?: Record<string, 'full' | 'basic'>;
  /** Keyless request limit (per server, not per IP): 429 {"error":"429 Too Many Requests. ..."} with NO Retry-After. null = off (default). */
  keylessRateLimit?: { requests: number; windowMs: number } | null;
  /** Limit that applies to every request, with or without key (for benchmarks). null = off (default). */
  globalRateLimit?: { requests: number; windowMs: number } | null;
  /** Added latency on every answer, ms (default 0). */
  latencyMs?: number;
  /** Load the default world (samples + edge cases). Default true. */
  seed?: boolean;
}

export interface RecordedRequest {
  method: string;
  /** Raw request target, still encoded (query string included). */
  path: string;
  headers: Record<string, string | string[] | undefined>;
  at: number;
}

export type FaultAction =
  | { kind: 'status'; status: number; body?: unknown; headers?: Record<string, string> }
  | { kind: 'rate-limit'; retryAfterSeconds?: number }
  | { kind: 'latency'; ms: number }
  | { kind: 'malformed' }
  | { kind: 'drop' };

export interface Fault {
  /** A string matches when the decoded path contains it; a RegExp is tested against the decoded path. Default: all. */
  match?: string | RegExp;
  /** How many requests the fault applies to; default unlimited. */
  times?: number;
  action: FaultAction;
}

export interface FakeWeb3Bio {
  /** e.g. http://127.0.0.1:34567 (no trailing slash). */
  readonly url: string;
  readonly port: number;
  /** Every request, recorded before faults apply. */
  readonly requests: RecordedRequest[];
  readonly world: FakeWorld;
  addFault(fault: Fault): void;
  clearFaults(): void;
  /** Forget requests, faults and rate-limit counts, restore the default world and the initial latency. */
  reset(): void;
  setLatency(ms: number): void;
  close(): Promise<void>;
}

type Mode = 'live' | 'spec';
type Permission = 'full' | 'basic';

interface Reply {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** What an error body says; a world `LookupError` is one. */
interface ErrorInfo {
  status: number;
  error: string;
  identity: string;
  platform: string;
}

interface ActiveFault {
  match: string | RegExp | undefined;
  remaining: number;
  action: FaultAction;
}

const TTL_SECONDS = { default: 7200, domain: 900, avatar: 86_400 } as const;
const RATE_LIMITED_BODY = {
  error:
    '429 Too Many Requests. Please refer to the rate limit guidelines at https://api.web3.bio/#authentication.',
};
/** Cut off mid-object, as a proxy that drops a connection mid-body would leave it. */
const MALFORMED_BODY =
  '{"address":"0xd8da6bf26964af9d7eed9e03e53415d37aa96045","identity":"vitalik.eth","displ';
const JSON_TYPE = 'application/json; charset=utf-8';

function cacheControl(ttl: number | null): string {
  return ttl === null ? 'no-store' : `public, max-age=${ttl}, s-maxage=${ttl}, stale-while-revalidate=86400`;
}

function json(status: number, body: unknown, ttl: number | null = null): Reply {
  return {
    status,
    headers: { 'content-type': JSON_TYPE, 'cache-control': cacheControl(ttl) },
    body: JSON.stringify(body),
  };
}

function text(status: number, body: string, contentType: string, ttl: number | null): Reply {
  return { status, headers: { 'content-type': contentType, 'cache-control': cacheControl(ttl) }, body };
}

/** Sliding-window request counter shared by every client of the server. */
class RateWindow {
  readonly #requests: number;
  readonly #windowMs: number;
  #hits: number[] = [];

  constructor(limit: { requests: number; windowMs: number }) {
    this.#requests = limit.requests;
    this.#windowMs = limit.windowMs;
  }

  /** Count one request at `now`; false (not counted) when the window is already full. */
  take(now: number): boolean {
    this.#hits = this.#hits.filter((at) => at > now - this.#windowMs);
    if (this.#hits.length >= this.#requests) return false;
    this.#hits.push(now);
    return true;
  }

  reset(): void {
    this.#hits = [];
  }
}

function decodeSegment(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

/** The API key from `X-API-KEY: Bearer <key>` or a bare key; null when absent or blank. */
function apiKeyOf(req: IncomingMessage): string | null {
  const header = req.headers['x-api-key'];
  const value = Array.isArray(header) ? header[0] : header;
  const key = value?.replace(/^bearer\s+/i, '').trim() ?? '';
  return key === '' ? null : key;
}

/** A generated gradient, like the live server's placeholder; no user text goes into it. */
function placeholderSvg(identity: string): string {
  let hash = 0;
  for (const char of identity) hash = (hash * 31 + (char.codePointAt(0) ?? 0)) >>> 0;
  const hue = hash % 360;
  return [
    '<svg xmlns="http://www.w3.org/2000/svg" width="240" height="240" viewBox="0 0 240 240">',
    '<defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1">',
    `<stop offset="0" stop-color="hsl(${hue},70%,60%)"/>`,
    `<stop offset="1" stop-color="hsl(${(hue + 60) % 360},70%,45%)"/>`,
    '</linearGradient></defs><rect width="240" height="240" fill="url(#g)"/></svg>',
  ].join('');
}

/** Start a stand-in Web3.bio server; resolves once it listens. */
export async function startFakeWeb3Bio(options: FakeWeb3BioOptions = {}): Promise<FakeWeb3Bio> {
  const host = options.host ?? '127.0.0.1';
  const mode: Mode = options.mode ?? 'live';
  const apiKeys = new Map<string, Permission>(Object.entries(options.apiKeys ?? {}));
  const keyless = options.keylessRateLimit ? new RateWindow(options.keylessRateLimit) : null;
  const global = options.globalRateLimit ? new RateWindow(options.globalRateLimit) : null;
  const seed = options.seed ?? true;
  const world = new FakeWorld();
  if (seed) seedDefaultWorld(world);
  const requests: RecordedRequest[] = [];
  const closing = new AbortController();
  let faults: ActiveFault[] = [];
  let latencyMs = Math.max(0, options.latencyMs ?? 0);

  function errorReply(error: ErrorInfo, path: string): Reply {
    const body =
      mode === 'live'
        ? { identity: error.identity, path, platform: error.platform, error: error.error }
        : { address: null, identity: error.identity, platform: error.platform, error: error.error };
    return json(error.status, body);
  }

  function lookupReply<T>(lookup: Lookup<T>, path: string, ttl: number = TTL_SECONDS.default): Reply {
    return lookup.ok ? json(200, lookup.value, ttl) : errorReply(lookup, path);
  }

  function authReply(message: string, status: 401 | 403): Reply {
    return json(status, { error: status === 401 ? 'Unauthorized' : 'Forbidden', message });
  }

  function takeFault(path: string): FaultAction | null {
    const fault = faults.find(({ match }) => {
      if (match === undefined) return true;
      if (typeof match === 'string') return path.includes(match);
      match.lastIndex = 0;
      return match.test(path);
    });
    if (fault === undefined) return null;
    fault.remaining -= 1;
    if (fault.remaining <= 0) faults = faults.filter((f) => f !== fault);
    return fault.action;
  }

  function faultReply(action: Exclude<FaultAction, { kind: 'latency' | 'drop' }>, path: string): Reply {
    switch (action.kind) {
      case 'rate-limit': {
        const reply = json(429, RATE_LIMITED_BODY);
        if (action.retryAfterSeconds !== undefined)
          reply.headers['retry-after'] = String(action.retryAfterSeconds);
        return reply;
      }
      case 'malformed':
        return text(200, MALFORMED_BODY, JSON_TYPE, TTL_SECONDS.default);
      case 'status': {
        const ttl = action.status >= 400 ? null : TTL_SECONDS.default;
        let reply: Reply;
        if (typeof action.body === 'string')
          reply = text(action.status, action.body, 'text/plain; charset=utf-8', ttl);
        else if (action.body !== undefined) reply = json(action.status, action.body, ttl);
        else if (action.status >= 400) {
          const error = `HTTP ${action.status}: ${STATUS_CODES[action.status] ?? 'Unknown Error'}`;
          reply = errorReply({ status: action.status, error, identity: '', platform: 'universal' }, path);
        } else reply = text(action.status, '', JSON_TYPE, ttl);
        Object.assign(reply.headers, action.headers);
        return reply;
      }
    }
  }

  function avatarReply(rawId: string, path: string): Reply {
    const lookup = world.lookupAvatar(rawId);
    const ttl = TTL_SECONDS.avatar;
    if (mode === 'spec') {
      return lookup.ok
        ? text(200, lookup.value.url ?? '', 'text/plain; charset=utf-8', ttl)
        : errorReply(lookup, path);
    }
    if (!lookup.ok) {
      const body = {
        identity: lookup.identity,
        platform: lookup.platform,
        message: lookup.error,
        code: lookup.status,
      };
      return json(200, body);
    }
    if (lookup.value.url === null)
      return text(200, placeholderSvg(lookup.value.identity), 'image/svg+xml', ttl);
    return {
      status: 307,
      headers: { location: lookup.value.url, 'cache-control': cacheControl(ttl) },
      body: '',
    };
  }

  function walletReply(rawId: string, permission: Permission | null, path: string): Reply {
    if (permission === null) return authReply('API key required', mode === 'live' ? 403 : 401);
    if (permission !== 'full') return authReply('Insufficient permissions', 403);
    return lookupReply(world.lookupWallet(rawId), path);
  }

  function routeReply(segments: string[], permission: Permission | null, path: string): Reply {
    const [family = '', first, second] = segments;
    const notFound = () =>
      errorReply({ status: 404, error: NOT_FOUND, identity: '', platform: 'universal' }, path);
    if (family === 'profile' || family === 'ns') {
      const view: ProfileView = family;
      if (first === undefined) return notFound();
      if (segments.length === 2) return lookupReply(world.lookupUniversal(first, view), path);
      if (segments.length !== 3 || second === undefined) return notFound();
      if (first === 'batch') return lookupReply(world.lookupBatch(second, view), path);
      return lookupReply(world.lookupPlatform(first, second, view), path);
    }
    if (segments.length !== 2 || first === undefined) return notFound();
    switch (family) {
      case 'credential':
        return lookupReply(world.lookupCredential(first), path);
      case 'domain':
        return lookupReply(world.lookupDomain(first), path, TTL_SECONDS.domain);
      case 'wallet':
        return walletReply(first, permission, path);
      case 'avatar':
        return avatarReply(first, path);
      default:
        return notFound();
    }
  }

  function answer(req: IncomingMessage, rawPath: string, path: string): Reply {
    if (req.method !== 'GET') {
      const reply = json(405, { error: 'Method Not Allowed' });
      reply.headers.allow = 'GET';
      return reply;
    }
    const key = apiKeyOf(req);
    const permission = key === null ? null : (apiKeys.get(key) ?? 'invalid');
    if (permission === 'invalid') return authReply('Invalid API token', mode === 'live' ? 403 : 401);
    const now = Date.now();
    if (global !== null && !global.take(now)) return json(429, RATE_LIMITED_BODY);
    const segments = rawPath.slice(1).split('/').map(decodeSegment);
    if (segments.some((s) => s === null)) {
      return errorReply({ status: 400, error: INVALID_IDENTITY, identity: '', platform: 'universal' }, path);
    }
    const decoded = segments.filter((s) => s !== null);
    // The live server exempts /avatar from the keyless limit.
    if (permission === null && keyless !== null && decoded[0] !== 'avatar' && !keyless.take(now)) {
      return json(429, RATE_LIMITED_BODY);
    }
    return routeReply(decoded, permission, path);
  }

  function write(res: ServerResponse, reply: Reply): void {
    if (res.destroyed) return;
    try {
      res.writeHead(reply.status, reply.headers);
    } catch {
      // A header value the world holds (e.g. an avatar URL with a newline) that HTTP cannot carry.
      const fallback = json(500, { error: 'Unknown Error Occurred' });
      res.writeHead(fallback.status, fallback.headers).end(fallback.body);
      return;
    }
    res.end(reply.body);
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const rawTarget = req.url ?? '/';
    requests.push({ method: req.method ?? '', path: rawTarget, headers: { ...req.headers }, at: Date.now() });
    const rawPath = rawTarget.split('?')[0] ?? '/';
    const path = decodeSegment(rawPath) ?? rawPath;
    const fault = takeFault(path);
    if (fault?.kind === 'drop') {
      req.socket.destroy();
      return;
    }
    const wait = latencyMs + (fault?.kind === 'latency' ? fault.ms : 0);
    if (wait > 0) await sleep(wait, undefined, { signal: closing.signal });
    const reply =
      fault !== null && fault.kind !== 'latency' ? faultReply(fault, path) : answer(req, rawPath, path);
    write(res, reply);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}`,
    port,
    requests,
    world,
    addFault(fault) {
      const remaining = fault.times ?? Number.POSITIVE_INFINITY;
      if (remaining > 0) faults.push({ match: fault.match, remaining, action: fault.action });
    },
    clearFaults() {
      faults = [];
    },
    reset() {
      requests.length = 0;
      faults = [];
      latencyMs = Math.max(0, options.latencyMs ?? 0);
      keyless?.reset();
      global?.reset();
      world.clear();
      if (seed) seedDefaultWorld(world);
    },
    setLatency(ms) {
      latencyMs = Math.max(0, ms);
    },
    close() {
      closing.abort();
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
