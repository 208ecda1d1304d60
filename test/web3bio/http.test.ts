import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type FakeWeb3Bio, startFakeWeb3Bio } from '../../fakes/web3bio/server.ts';
import { renderError } from '../../src/render/errors.ts';
import {
  InvalidIdentityError,
  NetworkError,
  NotFoundError,
  RateLimitedError,
  SchemaError,
  TimeoutError,
  UnauthorizedError,
  UpstreamError,
} from '../../src/web3bio/errors.ts';
import { endpointOf, redactUrl, type TransportOptions, Web3BioTransport } from '../../src/web3bio/http.ts';
import { parseRetryAfter } from '../../src/web3bio/httpAnswer.ts';
import { MAX_BODY_BYTES } from '../../src/web3bio/send.ts';

const RENDER_CTX = { locale: 'en-US', nowSec: 1_780_000_000, ipfsGateway: 'https://ipfs.io' };

const KEY = 'k-full';
const FAST_RETRY = { retries: 2, baseDelayMs: 1, maxDelayMs: 5 };

let fake: FakeWeb3Bio;
const transports: Web3BioTransport[] = [];

function transport(overrides: Partial<TransportOptions> = {}): Web3BioTransport {
  const t = new Web3BioTransport({
    baseUrl: fake.url,
    apiKey: KEY,
    timeoutMs: 2_000,
    retry: FAST_RETRY,
    rateLimit: null,
    concurrency: 8,
    userAgent: 'web3bio-discord-bot/test',
    ...overrides,
  });
  transports.push(t);
  return t;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

/** A loopback server answering with `handler`, for cases the stand-in does not cover. */
async function scripted(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ url: string; server: Server }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, server };
}

async function stop(server: Server): Promise<void> {
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

beforeAll(async () => {
  fake = await startFakeWeb3Bio({ mode: 'live', apiKeys: { [KEY]: 'full' } });
});

afterEach(async () => {
  fake.reset();
  await Promise.all(transports.splice(0).map((t) => t.close()));
});

afterAll(async () => {
  await fake.close();
});

describe('requests', () => {
  it('sends a GET with the API key as a Bearer header, a User-Agent and Accept', async () => {
    const answer = await transport().get('/profile/vitalik.eth', { identity: 'vitalik.eth' });
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body)).toBeInstanceOf(Array);
    expect(answer.url).toBe(`${fake.url}/profile/vitalik.eth`);
    const [request] = fake.requests;
    expect(request?.method).toBe('GET');
    expect(request?.headers['x-api-key']).toBe(`Bearer ${KEY}`);
    expect(request?.headers['user-agent']).toBe('web3bio-discord-bot/test');
    expect(request?.headers.accept).toContain('application/json');
  });

  it('sends no key header without a key, and tolerates a trailing slash in the base URL', async () => {
    await transport({ apiKey: undefined, baseUrl: `${fake.url}/` }).get('/ns/vitalik.eth', {
      identity: 'vitalik.eth',
    });
    expect(fake.requests[0]?.headers['x-api-key']).toBeUndefined();
    expect(fake.requests[0]?.path).toBe('/ns/vitalik.eth');
  });

  it('does not follow redirects: the 307 is the answer', async () => {
    const answer = await transport().get('/avatar/sujiyan.eth', { identity: 'sujiyan.eth' });
    expect(answer.status).toBe(307);
    expect(answer.headers.location).toBe('https://euc.li/sujiyan.eth');
    expect(fake.requests).toHaveLength(1);
  });
});

describe('observer (metrics)', () => {
  it('is told of every attempt with its endpoint and status, and of each wait for the limiter', async () => {
    const attempts: [string, string][] = [];
    const waits: number[] = [];
    const t = transport({
      rateLimit: { requests: 10, intervalMs: 1_000 },
      observer: {
        onAttempt: (endpoint, outcome) => attempts.push([endpoint, outcome]),
        onLimiterWait: (ms) => waits.push(ms),
      },
    });
    fake.addFault({ times: 1, action: { kind: 'status', status: 503 } });
    await t.get('/profile/vitalik.eth', { identity: 'vitalik.eth' });
    await rejection(t.get('/ns/nobody-here.eth', { identity: 'nobody-here.eth' }));
    expect(attempts).toEqual([
      ['profile', '503'],
      ['profile', '200'],
      ['ns', '404'],
    ]);
    expect(waits).toHaveLength(3);
    expect(waits.every((ms) => ms >= 0)).toBe(true);
  });

  it('names endpoints without identities: batch routes apart, platform segments dropped', () => {
    expect(endpointOf('/profile/batch/%5B%22ens%2Cvitalik.eth%22%5D')).toBe('profile/batch');
    expect(endpointOf('/ns/ens/vitalik.eth')).toBe('ns');
    expect(endpointOf('/avatar/vitalik.eth')).toBe('avatar');
  });
});

describe('status mapping', () => {
  it.each([
    [400, InvalidIdentityError],
    [401, UnauthorizedError],
    [403, UnauthorizedError],
    [418, UpstreamError],
  ])('%i -> %o, not retried', async (status, type) => {
    fake.addFault({ action: { kind: 'status', status } });
    const error = await rejection(transport().get('/profile/vitalik.eth', { identity: 'vitalik.eth' }));
    expect(error).toBeInstanceOf(type);
    expect(fake.requests).toHaveLength(1);
  });

  it.each([
    ['Not Found', 404],
    ['Invalid Identity or Domain', 404],
    ['Does Not Exist', 404],
    ['Invalid Resolved Address', 404],
    ['  not found ', 500],
    ['Not Found', 200],
  ])('reads the not-found text %j (status %i) as not found, not retried', async (text, status) => {
    fake.addFault({ action: { kind: 'status', status, body: { identity: 'x.eth', error: text } } });
    const error = await rejection(transport().get('/credential/x.eth', { identity: 'x.eth' }));
    expect(error).toBeInstanceOf(NotFoundError);
    expect(fake.requests).toHaveLength(1);
  });

  it.each([
    ['Network Error', 500],
    ['Unknown Error Occurred', 404],
    ['HTTP 502: Bad Gateway', 404],
    ['HTTP 404: Not Found', 404],
    ['Network Error', 200],
    ['something new', 404],
  ])('reads %j (status %i) as an upstream failure and retries it', async (text, status) => {
    fake.addFault({ action: { kind: 'status', status, body: { identity: 'x.eth', error: text } } });
    const error = await rejection(transport().get('/credential/x.eth', { identity: 'x.eth' }));
    expect(error).toBeInstanceOf(UpstreamError);
    expect(fake.requests).toHaveLength(FAST_RETRY.retries + 1);
  });

  it('a 404 without an error text is a failure, not "gone"', async () => {
    fake.addFault({ action: { kind: 'status', status: 404, body: '<html>proxy</html>' } });
    const error = await rejection(transport().get('/credential/x.eth', { identity: 'x.eth' }));
    expect(error).toBeInstanceOf(UpstreamError);
  });

  it('maps a real 404 with the identity and the upstream body', async () => {
    const error = await rejection(
      transport().get('/profile/nobody-here.eth', { identity: 'nobody-here.eth' }),
    );
    expect(error).toBeInstanceOf(NotFoundError);
    const notFound = error as NotFoundError;
    expect(notFound.identity).toBe('nobody-here.eth');
    expect(notFound.status).toBe(404);
    expect(notFound.body).toContain('Not Found');
  });

  it('maps a bad key to UnauthorizedError (live 403)', async () => {
    const error = await rejection(
      transport({ apiKey: 'wrong-key' }).get('/profile/vitalik.eth', { identity: 'vitalik.eth' }),
    );
    expect(error).toBeInstanceOf(UnauthorizedError);
    expect((error as UnauthorizedError).status).toBe(403);
  });
});

describe('retries', () => {
  it('retries a 429 and then succeeds', async () => {
    fake.addFault({ times: 1, action: { kind: 'rate-limit' } });
    const answer = await transport().get('/profile/vitalik.eth', { identity: 'vitalik.eth' });
    expect(answer.status).toBe(200);
    expect(fake.requests).toHaveLength(2);
  });

  it('retries 5xx and network drops', async () => {
    fake.addFault({ times: 1, action: { kind: 'status', status: 502 } });
    fake.addFault({ times: 1, action: { kind: 'drop' } });
    const answer = await transport().get('/profile/vitalik.eth', { identity: 'vitalik.eth' });
    expect(answer.status).toBe(200);
    expect(fake.requests).toHaveLength(3);
  });

  it('gives up after the retry limit with RateLimitedError (no Retry-After: backs off on its own)', async () => {
    fake.addFault({ action: { kind: 'rate-limit' } });
    const error = await rejection(transport().get('/profile/vitalik.eth', { identity: 'vitalik.eth' }));
    expect(error).toBeInstanceOf(RateLimitedError);
    expect((error as RateLimitedError).retryAfterMs).toBeNull();
    expect(fake.requests).toHaveLength(FAST_RETRY.retries + 1);
  });

  it('gives up on a persistent 500 with UpstreamError and on drops with NetworkError', async () => {
    fake.addFault({ match: 'profile', action: { kind: 'status', status: 500 } });
    fake.addFault({ match: 'ns', action: { kind: 'drop' } });
    const t = transport();
    const upstream = await rejection(t.get('/profile/vitalik.eth', { identity: 'vitalik.eth' }));
    expect(upstream).toBeInstanceOf(UpstreamError);
    expect((upstream as UpstreamError).status).toBe(500);
    const network = await rejection(t.get('/ns/vitalik.eth', { identity: 'vitalik.eth' }));
    expect(network).toBeInstanceOf(NetworkError);
    expect(fake.requests).toHaveLength(2 * (FAST_RETRY.retries + 1));
  });

  it('honours Retry-After in seconds', async () => {
    fake.addFault({ times: 1, action: { kind: 'rate-limit', retryAfterSeconds: 1 } });
    await transport({ retry: { retries: 1, baseDelayMs: 1, maxDelayMs: 5_000 } }).get(
      '/profile/vitalik.eth',
      {
        identity: 'vitalik.eth',
      },
    );
    const [first, second] = fake.requests;
    expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(950);
  });

  it('caps Retry-After at maxDelayMs and reads HTTP dates', async () => {
    const inAMinute = new Date(Date.now() + 60_000).toUTCString();
    fake.addFault({
      times: 1,
      action: { kind: 'status', status: 429, headers: { 'retry-after': inAMinute }, body: { error: 'slow' } },
    });
    const started = performance.now();
    await transport({ retry: { retries: 1, baseDelayMs: 1, maxDelayMs: 30 } }).get('/profile/vitalik.eth', {
      identity: 'vitalik.eth',
    });
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(25);
    expect(elapsed).toBeLessThan(2_000);
    expect(fake.requests).toHaveLength(2);
  });

  it('uses full jitter: a random draw of 0 retries at once even with a huge base delay', async () => {
    fake.addFault({ times: 2, action: { kind: 'status', status: 503 } });
    const started = performance.now();
    await transport({
      retry: { retries: 2, baseDelayMs: 60_000, maxDelayMs: 60_000 },
      random: () => 0,
    }).get('/profile/vitalik.eth', { identity: 'vitalik.eth' });
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(fake.requests).toHaveLength(3);
  });
});

describe('timeouts and aborts', () => {
  it('times out each attempt and retries, then throws TimeoutError', async () => {
    fake.addFault({ action: { kind: 'latency', ms: 1_000 } });
    const error = await rejection(
      transport({ timeoutMs: 50, retry: { retries: 1, baseDelayMs: 1, maxDelayMs: 2 } }).get(
        '/profile/vitalik.eth',
        {
          identity: 'vitalik.eth',
        },
      ),
    );
    expect(error).toBeInstanceOf(TimeoutError);
    expect((error as TimeoutError).timeoutMs).toBe(50);
    expect(fake.requests).toHaveLength(2);
  });

  it('takes a per-call timeout', async () => {
    fake.addFault({ times: 1, action: { kind: 'latency', ms: 1_000 } });
    const error = await rejection(
      transport({ retry: { retries: 0, baseDelayMs: 1, maxDelayMs: 1 } }).get('/profile/vitalik.eth', {
        identity: 'vitalik.eth',
        timeoutMs: 40,
      }),
    );
    expect(error).toBeInstanceOf(TimeoutError);
  });

  it("rejects with the caller's abort reason and does not retry", async () => {
    fake.addFault({ action: { kind: 'latency', ms: 1_000 } });
    const controller = new AbortController();
    const pending = transport().get('/profile/vitalik.eth', {
      identity: 'vitalik.eth',
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(new Error('user gave up')), 30);
    const error = await rejection(pending);
    expect((error as Error).message).toBe('user gave up');
    expect(fake.requests).toHaveLength(1);
  });

  it('rejects at once when the signal is already aborted', async () => {
    const error = await rejection(
      transport().get('/profile/vitalik.eth', {
        identity: 'x',
        signal: AbortSignal.abort(new Error('early')),
      }),
    );
    expect((error as Error).message).toBe('early');
    expect(fake.requests).toHaveLength(0);
  });
});

describe('bodies', () => {
  it('times out a body that stops half way', async () => {
    const { url, server } = await scripted((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('[{"identity":');
    });
    try {
      const started = performance.now();
      const error = await rejection(
        transport({ baseUrl: url, timeoutMs: 60, retry: { retries: 0, baseDelayMs: 1, maxDelayMs: 1 } }).get(
          '/profile/stall.eth',
          { identity: 'stall.eth' },
        ),
      );
      expect(error).toBeInstanceOf(TimeoutError);
      expect((error as TimeoutError).timeoutMs).toBe(60);
      // The attempt's own timer, not a coarse shared clock (undici's fast timers tick every ~0.5 s).
      expect(performance.now() - started).toBeLessThan(400);
    } finally {
      await stop(server);
    }
  });

  it('times out a body that keeps trickling past the attempt timeout', async () => {
    const { url, server } = await scripted((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const timer = setInterval(() => res.write(' '), 15);
      res.on('close', () => clearInterval(timer));
    });
    try {
      const started = performance.now();
      const error = await rejection(
        transport({ baseUrl: url, timeoutMs: 80, retry: { retries: 0, baseDelayMs: 1, maxDelayMs: 1 } }).get(
          '/profile/drip.eth',
          { identity: 'drip.eth' },
        ),
      );
      expect(error).toBeInstanceOf(TimeoutError);
      expect(performance.now() - started).toBeLessThan(1_000);
    } finally {
      await stop(server);
    }
  });

  it('refuses a body larger than MAX_BODY_BYTES without retrying', async () => {
    let requests = 0;
    const chunk = Buffer.alloc(1024 * 1024, 0x20);
    const { url, server } = await scripted((_req, res) => {
      requests++;
      res.writeHead(200, { 'content-type': 'application/json' });
      for (let i = 0; i <= MAX_BODY_BYTES / chunk.length; i++) res.write(chunk);
      res.end('[]');
    });
    try {
      const error = await rejection(
        transport({ baseUrl: url }).get('/profile/big.eth', { identity: 'big.eth' }),
      );
      expect(error).toBeInstanceOf(SchemaError);
      expect((error as SchemaError).issues[0]).toContain('larger than');
      expect(requests).toBe(1);
    } finally {
      await stop(server);
    }
  });

  it("rejects with the caller's abort reason while the body is arriving", async () => {
    const controller = new AbortController();
    const { url, server } = await scripted((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('[', () => controller.abort(new Error('gave up mid-body')));
    });
    try {
      const error = await rejection(
        transport({ baseUrl: url }).get('/profile/mid.eth', {
          identity: 'mid.eth',
          signal: controller.signal,
        }),
      );
      expect((error as Error).message).toBe('gave up mid-body');
    } finally {
      await stop(server);
    }
  });

  it('decodes a body split across chunks, multi-byte characters included', async () => {
    const text = JSON.stringify([{ identity: 'ünïcødé.eth', note: '🚀'.repeat(2_000) }]);
    const bytes = Buffer.from(text, 'utf8');
    const { url, server } = await scripted((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      // Split inside a multi-byte character on purpose.
      res.write(bytes.subarray(0, 5));
      setTimeout(() => res.end(bytes.subarray(5)), 5);
    });
    try {
      const answer = await transport({ baseUrl: url }).get('/profile/x.eth', { identity: 'x.eth' });
      expect(answer.body).toBe(text);
    } finally {
      await stop(server);
    }
  });
});

describe('limits', () => {
  it('keeps at most `concurrency` requests in flight', async () => {
    let inFlight = 0;
    let peak = 0;
    const { url, server } = await scripted((_req, res) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      setTimeout(() => {
        inFlight--;
        res.writeHead(200, { 'content-type': 'application/json' }).end('[]');
      }, 20);
    });
    try {
      const t = transport({ baseUrl: url, concurrency: 2 });
      await Promise.all(Array.from({ length: 6 }, (_, i) => t.get(`/profile/n${i}.eth`, { identity: 'x' })));
      expect(peak).toBe(2);
    } finally {
      await stop(server);
    }
  });

  it('spaces requests by the client-side rate limit instead of causing 429s', async () => {
    await fake.close();
    fake = await startFakeWeb3Bio({
      mode: 'live',
      apiKeys: { [KEY]: 'full' },
      keylessRateLimit: { requests: 3, windowMs: 100 },
    });
    const t = transport({
      apiKey: undefined,
      rateLimit: { requests: 3, intervalMs: 160 },
      retry: FAST_RETRY,
    });
    const answers = await Promise.all(
      Array.from({ length: 7 }, () => t.get('/profile/vitalik.eth', { identity: 'vitalik.eth' })),
    );
    expect(answers.every((a) => a.status === 200)).toBe(true);
    expect(fake.requests).toHaveLength(7);
    const times = fake.requests.map((r) => r.at).sort((a, b) => a - b);
    for (let i = 3; i < times.length; i++) {
      expect((times[i] ?? 0) - (times[i - 3] ?? 0)).toBeGreaterThanOrEqual(100);
    }
  });
});

describe('the API key never leaks', () => {
  const SECRET = 'sk-live-0123456789abcdef';

  it('is scrubbed from upstream bodies echoed into errors, their logs and JSON', async () => {
    const { url, server } = await scripted((req, res) => {
      const body = JSON.stringify({
        error: 'Forbidden',
        message: `bad key ${String(req.headers['x-api-key'])}`,
      });
      const status = req.url?.includes('down') ? 503 : 403;
      res.writeHead(status, { 'content-type': 'application/json' }).end(body);
    });
    const lines: string[] = [];
    const logger = {
      debug: (obj: object, msg?: string) => lines.push(JSON.stringify(obj) + (msg ?? '')),
      warn: (obj: object, msg?: string) => lines.push(JSON.stringify(obj) + (msg ?? '')),
    };
    try {
      const t = transport({ baseUrl: url, apiKey: SECRET, logger });
      const errors = [
        await rejection(t.get('/wallet/x', { identity: 'x' })),
        await rejection(t.get('/down/x', { identity: 'x' })),
      ];
      expect(errors[0]).toBeInstanceOf(UnauthorizedError);
      expect(errors[1]).toBeInstanceOf(UpstreamError);
      for (const error of errors) {
        const e = error as UnauthorizedError;
        expect(e.body).toContain('[redacted]');
        for (const text of [
          e.message,
          e.stack ?? '',
          JSON.stringify(e),
          JSON.stringify(e.toLog()),
          JSON.stringify(renderError(e, RENDER_CTX)),
        ]) {
          expect(text).not.toContain(SECRET);
        }
      }
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) expect(line).not.toContain(SECRET);
    } finally {
      await stop(server);
    }
  });

  it('is not in network errors or base URLs with credentials', async () => {
    const { url, server } = await scripted((req) => req.socket.destroy());
    try {
      const withCredentials = url.replace('http://', 'http://user:pass@');
      const error = await rejection(
        transport({ baseUrl: withCredentials, apiKey: SECRET }).get('/profile/x.eth', { identity: 'x.eth' }),
      );
      expect(error).toBeInstanceOf(NetworkError);
      const e = error as NetworkError;
      for (const text of [e.message, JSON.stringify(e), JSON.stringify(e.toLog())]) {
        expect(text).not.toContain(SECRET);
        expect(text).not.toContain('pass');
      }
    } finally {
      await stop(server);
    }
  });
});

describe('helpers', () => {
  it.each([
    ['5', 5_000],
    [' 0 ', 0],
    [new Date(Date.UTC(2030, 0, 1, 0, 0, 10)).toUTCString(), 10_000],
    [new Date(Date.UTC(2029, 0, 1)).toUTCString(), 0],
    ['soon', null],
    [undefined, null],
  ])('parseRetryAfter(%s) = %s', (value, ms) => {
    expect(parseRetryAfter(value, Date.UTC(2030, 0, 1))).toBe(ms);
  });

  it('redactUrl drops credentials, query and fragment', () => {
    expect(redactUrl('https://user:secret@api.example.com/base/?key=1#x')).toBe(
      'https://api.example.com/base',
    );
    expect(redactUrl('not a url')).toBe('(invalid base URL)');
  });
});
