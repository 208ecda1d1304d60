/**
 * What an upstream answer means: an answer with status 400 or above (or an error text in a 200) mapped to
 * the error family, and its Retry-After read.
 */
import {
  errorBodyText,
  InvalidIdentityError,
  isNotFoundText,
  NotFoundError,
  RateLimitedError,
  UnauthorizedError,
  UpstreamError,
  type Web3BioError,
} from './errors.ts';

export interface HttpAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  /** The request URL, safe to log. */
  url: string;
}

/** Map a status >= 400 to the error family. */
export function errorForStatus(answer: HttpAnswer, identity: string): Web3BioError {
  const { status, url, body } = answer;
  if (status === 400) {
    return new InvalidIdentityError(identity, 'Web3.bio does not accept it as an identity');
  }
  if (status === 401 || status === 403) return new UnauthorizedError(status, url, body);
  if (status === 429) {
    return new RateLimitedError(url, body, parseRetryAfter(header(answer.headers, 'retry-after')));
  }
  return errorForBody(answer, identity);
}

/**
 * An error answer read by its text, whatever its status: the service's not-found texts mean not found;
 * anything else (failure texts, pass-through texts, no text at all) is an upstream failure, retried,
 * answered from stale data where there is some, and never taken as "gone".
 */
export function errorForBody(answer: HttpAnswer, identity: string): Web3BioError {
  const text = errorBodyText(answer.body);
  if (text !== null && isNotFoundText(text)) {
    return new NotFoundError(identity, answer.status, answer.url, answer.body);
  }
  return new UpstreamError(answer.status, answer.url, answer.body);
}

/** Retry-After as milliseconds from now: delta-seconds or an HTTP date; null when absent or invalid. */
export function parseRetryAfter(value: string | undefined, now: number = Date.now()): number | null {
  if (value === undefined) return null;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1_000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? null : Math.max(0, date - now);
}

/** First value of a response header. */
export function header(
  headers: Record<string, string | string[] | undefined>,
  name: string,
): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}
