/**
 * The transport under the client: undici GETs with keep-alive, a per-attempt timeout, the caller's
 * AbortSignal, the API key header, retries with full-jitter backoff (honouring Retry-After), a
 * concurrency limit and a client-side rate limiter. Statuses >= 400 become the error family.
 */
import { Agent, type Dispatcher } from 'undici';
import {
  errorBodyText,
  isWeb3BioError,
  NetworkError,
  RateLimitedError,
  SchemaError,
  TimeoutError,
  UpstreamError,
  type Web3BioError,
} from './errors.ts';
import { errorForBody, errorForStatus, type HttpAnswer } from './httpAnswer.ts';
import { type RateLimit, type RequestLimiter, SlidingWindowLimiter } from './rateLimiter.ts';
import { RequestGate } from './requestGate.ts';
import { AttemptTimedOut, BodyTooLarge, MAX_BODY_BYTES, send } from './send.ts';

export interface RetryOptions {
  /** Extra attempts after the first. */
  retries: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

/** pino-compatible subset. */
export interface TransportLogger {
  debug(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

/** Told about each attempt and each wait for the rate limiter (metrics); must not throw. */
export interface TransportObserver {
  /** `endpoint` e.g. `profile` or `profile/batch`; `outcome` the HTTP status, or the error kind when no answer came. */
  onAttempt?(endpoint: string, outcome: string, ms: number): void;
  onLimiterWait?(ms: number): void;
}

export interface TransportOptions {
  baseUrl: string;
  apiKey?: string | undefined;
  /** Injected dispatcher; when absent the transport owns a keep-alive Agent and closes it. */
  dispatcher?: Dispatcher | undefined;
  timeoutMs: number;
  retry: RetryOptions;
  rateLimit: RateLimit | null;
  /** Builds the limiter for `rateLimit` (e.g. one shared through Redis); default a local SlidingWindowLimiter. */
  rateLimiter?: ((limit: RateLimit) => RequestLimiter) | undefined;
  concurrency: number;
  userAgent: string;
  logger?: TransportLogger | undefined;
  observer?: TransportObserver | undefined;
  /** Random source in [0, 1) for jitter; injectable for tests. */
  random?: () => number;
}

export interface GetOptions {
  /** The identity the request is about, for NotFoundError and InvalidIdentityError. */
  identity: string;
  signal?: AbortSignal | undefined;
  /** Per attempt; defaults to the transport's. */
  timeoutMs?: number | undefined;
}

const REDACTED = '[redacted]';

/** Where requests go and what they carry. */
interface RequestTarget {
  baseUrl: string;
  /** The base URL safe to log. */
  redactedBaseUrl: string;
  headers: Record<string, string>;
  /** Per attempt, unless the call gives its own. */
  timeoutMs: number;
}

/** GET transport with retries and limits. */
export class Web3BioTransport {
  readonly #target: RequestTarget;
  readonly #redactor: KeyRedactor;
  readonly #dispatcher: Dispatcher;
  readonly #ownsDispatcher: boolean;
  readonly #backoff: Backoff;
  readonly #gate: RequestGate;
  readonly #logger: TransportLogger | undefined;
  readonly #observer: TransportObserver | undefined;
  #closed = false;

  constructor(options: TransportOptions) {
    const baseUrl = options.baseUrl.replace(/\/+$/, '');
    const apiKey = options.apiKey || undefined;
    this.#redactor = new KeyRedactor(apiKey);
    this.#ownsDispatcher = options.dispatcher === undefined;
    this.#dispatcher =
      options.dispatcher ??
      new Agent({ keepAliveTimeout: 10_000, keepAliveMaxTimeout: 60_000, connections: options.concurrency });
    this.#backoff = new Backoff(options.retry, options.random ?? Math.random);
    const makeLimiter = options.rateLimiter ?? ((limit: RateLimit) => new SlidingWindowLimiter(limit));
    const limiter = options.rateLimit ? makeLimiter(options.rateLimit) : null;
    this.#gate = new RequestGate(options.concurrency, limiter, options.observer);
    this.#logger = options.logger;
    this.#observer = options.observer;
    const headers: Record<string, string> = {
      accept: 'application/json, text/plain;q=0.9, */*;q=0.8',
      'user-agent': options.userAgent,
    };
    if (apiKey) headers['x-api-key'] = `Bearer ${apiKey}`;
    this.#target = { baseUrl, redactedBaseUrl: redactUrl(baseUrl), headers, timeoutMs: options.timeoutMs };
  }

  /**
   * GET `path` (already encoded, starting with `/`). Answers below 400 are returned as they are
   * (redirects are not followed); 429, 5xx, network errors and timeouts are retried; the last failure
   * is thrown as a Web3BioError. An abort of `signal` rejects with its reason and is never retried.
   */
  async get(path: string, options: GetOptions): Promise<HttpAnswer> {
    const url = `${this.#target.redactedBaseUrl}${path}`;
    for (let attempt = 0; ; attempt++) {
      let error: Web3BioError;
      try {
        return await this.#attempt(path, url, options, attempt);
      } catch (caught) {
        if (options.signal?.aborted || this.#closed || !isRetryable(caught)) throw caught;
        error = caught;
      }
      if (attempt >= this.#backoff.retries) throw error;
      const delayMs = this.#backoff.delay(attempt, error);
      this.#logger?.warn(
        { url, attempt: attempt + 1, delayMs, error: error.toLog() },
        'web3bio request failed, retrying',
      );
      await sleep(delayMs, options.signal);
    }
  }

  /** Close the owned dispatcher and reject queued requests. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#gate.close(new Error('Web3.bio client closed'));
    if (this.#ownsDispatcher) await this.#dispatcher.close();
  }

  async #attempt(path: string, url: string, options: GetOptions, attempt: number): Promise<HttpAnswer> {
    if (this.#closed) throw new Error('Web3.bio client closed');
    const leave = await this.#gate.enter(options.signal);
    try {
      const timeoutMs = options.timeoutMs ?? this.#target.timeoutMs;
      const started = performance.now();
      let outcome = 'network';
      try {
        const response = await send(this.#dispatcher, new URL(`${this.#target.baseUrl}${path}`), {
          headers: this.#target.headers,
          timeoutMs,
          signal: options.signal,
        });
        const answer: HttpAnswer = { ...response, body: this.#redactor.text(response.body), url };
        outcome = String(answer.status);
        this.#logger?.debug(
          { url, status: answer.status, attempt: attempt + 1, ms: Math.round(performance.now() - started) },
          'web3bio request',
        );
        if (answer.status >= 400) throw errorForStatus(answer, options.identity);
        // A 200 can carry an error too; it is read by its text like any other.
        if (answer.status === 200 && errorBodyText(answer.body) !== null) {
          throw errorForBody(answer, options.identity);
        }
        return answer;
      } catch (error) {
        if (options.signal?.aborted) {
          outcome = 'aborted';
          throw options.signal.reason;
        }
        if (error instanceof AttemptTimedOut) {
          outcome = 'timeout';
          throw new TimeoutError(url, timeoutMs);
        }
        if (error instanceof BodyTooLarge) {
          throw new SchemaError(url, '', [`response body larger than ${MAX_BODY_BYTES} bytes`]);
        }
        if (isWeb3BioError(error)) throw error;
        throw new NetworkError(url, this.#redactor.error(error));
      } finally {
        this.#observer?.onAttempt?.(endpointOf(path), outcome, performance.now() - started);
      }
    } finally {
      leave();
    }
  }
}

/** Retry delays: Retry-After when the server gave one, else full-jitter exponential backoff. */
class Backoff {
  readonly #retry: RetryOptions;
  readonly #random: () => number;

  constructor(retry: RetryOptions, random: () => number) {
    this.#retry = retry;
    this.#random = random;
  }

  /** Extra attempts after the first. */
  get retries(): number {
    return this.#retry.retries;
  }

  delay(attempt: number, error: Web3BioError): number {
    const { baseDelayMs, maxDelayMs } = this.#retry;
    if (error instanceof RateLimitedError && error.retryAfterMs !== null) {
      return Math.min(error.retryAfterMs, maxDelayMs);
    }
    const ceiling = Math.min(maxDelayMs, baseDelayMs * 2 ** attempt);
    return Math.floor(this.#random() * ceiling);
  }
}

/** An upstream that echoes the key back must not get it into errors or logs. */
class KeyRedactor {
  readonly #apiKey: string | undefined;

  constructor(apiKey: string | undefined) {
    this.#apiKey = apiKey;
  }

  text(text: string): string {
    return this.#apiKey && text.includes(this.#apiKey) ? text.split(this.#apiKey).join(REDACTED) : text;
  }

  /** A cause safe to keep: the original error unless its message holds the key. */
  error(error: unknown): unknown {
    return scrubError(error, this.#apiKey);
  }
}

/** The URL redacted for logs and errors: without credentials, query or fragment. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    parsed.search = '';
    parsed.hash = '';
    return parsed.toString().replace(/\/+$/, '');
  } catch {
    return '(invalid base URL)';
  }
}

/** The endpoint of a request path for metrics: `/profile/batch/…` is `profile/batch`, `/ns/ens/x` is `ns`. */
export function endpointOf(path: string): string {
  const [, first = '', second] = path.split('/', 3);
  return second === 'batch' ? `${first}/batch` : first;
}

function isRetryable(error: unknown): error is Web3BioError {
  if (error instanceof RateLimitedError || error instanceof NetworkError || error instanceof TimeoutError) {
    return true;
  }
  // A 404 or 200 whose text is not a not-found text is a failure in disguise: retried like a 5xx.
  return (
    error instanceof UpstreamError && (error.status >= 500 || error.status === 404 || error.status === 200)
  );
}

/** A cause safe to keep: the original error unless its message holds the key. */
function scrubError(error: unknown, apiKey: string | undefined): unknown {
  if (!apiKey || !(error instanceof Error) || !error.message.includes(apiKey)) return error;
  return new Error(error.message.split(apiKey).join(REDACTED));
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    signal?.throwIfAborted();
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
