/**
 * The client's error family. Every error has a `kind` (stable, for code, exit codes and the words in
 * `render/errors.ts`: the client writes no sentences for users) and structured fields for logs. None
 * ever carries the API key.
 */

export type Web3BioErrorKind =
  | 'invalid_identity'
  | 'not_found'
  | 'unauthorized'
  | 'api_key_required'
  | 'rate_limited'
  | 'upstream'
  | 'timeout'
  | 'network'
  | 'schema';

export abstract class Web3BioError extends Error {
  abstract readonly kind: Web3BioErrorKind;

  /** Structured fields for a log line. */
  toLog(): Record<string, unknown> {
    return { kind: this.kind, message: this.message };
  }
}

/** Input rejected before any request. */
export class InvalidIdentityError extends Web3BioError {
  readonly kind = 'invalid_identity';
  /** The input, cut to 64 characters for logs. */
  readonly input: string;
  readonly reason: string;
  constructor(input: string, reason: string) {
    super(`Invalid identity: ${reason}`);
    this.name = 'InvalidIdentityError';
    this.input = input.length > 64 ? `${input.slice(0, 63)}…` : input;
    this.reason = reason;
  }
  override toLog() {
    return { ...super.toLog(), input: this.input, reason: this.reason };
  }
}

/** Base for errors that came from an HTTP answer. `url` never includes credentials. */
export abstract class Web3BioHttpError extends Web3BioError {
  readonly status: number;
  readonly url: string;
  /** Upstream body, cut to 500 characters. */
  readonly body: string;
  constructor(message: string, status: number, url: string, body: string) {
    super(message);
    this.status = status;
    this.url = url;
    this.body = body.length > 500 ? `${body.slice(0, 499)}…` : body;
  }
  override toLog() {
    return { ...super.toLog(), status: this.status, url: this.url, body: this.body };
  }
}

export class NotFoundError extends Web3BioHttpError {
  readonly kind = 'not_found';
  readonly identity: string;
  constructor(identity: string, status = 404, url = '', body = '') {
    super(`Not found: ${identity}`, status, url, body);
    this.name = 'NotFoundError';
    this.identity = identity;
  }
}

/** 401 or 403: the key is missing, invalid or lacks permission. */
export class UnauthorizedError extends Web3BioHttpError {
  readonly kind = 'unauthorized';
  constructor(status: number, url: string, body: string) {
    super(`Unauthorized (${status})`, status, url, body);
    this.name = 'UnauthorizedError';
  }
}

/** An endpoint that needs an API key was called without one; no request was made. */
export class ApiKeyRequiredError extends Web3BioError {
  readonly kind = 'api_key_required';
  readonly endpoint: string;
  constructor(endpoint: string) {
    super(`The ${endpoint} endpoint needs a Web3.bio API key (WEB3BIO_API_KEY)`);
    this.name = 'ApiKeyRequiredError';
    this.endpoint = endpoint;
  }
  override toLog() {
    return { ...super.toLog(), endpoint: this.endpoint };
  }
}

export class RateLimitedError extends Web3BioHttpError {
  readonly kind = 'rate_limited';
  /** From `Retry-After` when the server sent one. */
  readonly retryAfterMs: number | null;
  constructor(url: string, body: string, retryAfterMs: number | null) {
    super('Rate limited by Web3.bio', 429, url, body);
    this.name = 'RateLimitedError';
    this.retryAfterMs = retryAfterMs;
  }
  override toLog() {
    return { ...super.toLog(), retryAfterMs: this.retryAfterMs };
  }
}

/** 5xx, or an unexpected status. */
export class UpstreamError extends Web3BioHttpError {
  readonly kind = 'upstream';
  constructor(status: number, url: string, body: string) {
    super(`Upstream error (${status})`, status, url, body);
    this.name = 'UpstreamError';
  }
}

export class TimeoutError extends Web3BioError {
  readonly kind = 'timeout';
  readonly url: string;
  readonly timeoutMs: number;
  constructor(url: string, timeoutMs: number) {
    super(`Timed out after ${timeoutMs} ms: ${url}`);
    this.name = 'TimeoutError';
    this.url = url;
    this.timeoutMs = timeoutMs;
  }
  override toLog() {
    return { ...super.toLog(), url: this.url, timeoutMs: this.timeoutMs };
  }
}

export class NetworkError extends Web3BioError {
  readonly kind = 'network';
  readonly url: string;
  constructor(url: string, cause: unknown) {
    super(`Network error: ${url}`, { cause });
    this.name = 'NetworkError';
    this.url = url;
  }
  override toLog() {
    const cause =
      this.cause instanceof Error ? `${this.cause.name}: ${this.cause.message}` : String(this.cause);
    return { ...super.toLog(), url: this.url, cause };
  }
}

/** The request worked but the data did not match the schema. `path` names where. */
export class SchemaError extends Web3BioError {
  readonly kind = 'schema';
  readonly url: string;
  readonly path: string;
  readonly issues: string[];
  constructor(url: string, path: string, issues: string[]) {
    super(`Unexpected response shape at ${path || '(root)'}: ${issues.join('; ')}`);
    this.name = 'SchemaError';
    this.url = url;
    this.path = path;
    this.issues = issues;
  }
  override toLog() {
    return { ...super.toLog(), url: this.url, path: this.path, issues: this.issues };
  }
}

/**
 * Error texts with which the live service says "nothing is known here" (real-server notes). Any other
 * text, including "Network Error", "Unknown Error Occurred" and pass-through texts such as
 * "HTTP 502: Bad Gateway", is a failure of the service, whatever the status it came with.
 */
const NOT_FOUND_TEXTS = new Set([
  'not found',
  'invalid identity or domain',
  'does not exist',
  'invalid resolved address',
  'invalid resolver address',
  'invalid address',
]);

/** The `error` text of an error body (`{"error": "..."}`), or null when the body has none. */
export function errorBodyText(body: string): string | null {
  if (!body.trimStart().startsWith('{') || !body.includes('"error"')) return null;
  try {
    const data: unknown = JSON.parse(body);
    if (typeof data !== 'object' || data === null || Array.isArray(data)) return null;
    const text = (data as { error?: unknown }).error;
    return typeof text === 'string' ? text : null;
  } catch {
    return null;
  }
}

/** Whether an error text means "not found" (else it is an upstream failure). */
export function isNotFoundText(text: string): boolean {
  return NOT_FOUND_TEXTS.has(text.trim().toLowerCase());
}

export function isWeb3BioError(error: unknown): error is Web3BioError {
  return error instanceof Web3BioError;
}
