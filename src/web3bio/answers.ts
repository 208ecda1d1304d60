/** Reading the server's answers before the schemas: JSON bodies, error bodies, the avatar's three forms. */
import { NotFoundError, SchemaError, UpstreamError } from './errors.ts';
import { type HttpAnswer, header } from './httpAnswer.ts';
import { parseResponse, RawAvatarError } from './schemas.ts';

export function parseJson(answer: HttpAnswer): unknown {
  try {
    return JSON.parse(answer.body);
  } catch {
    throw new SchemaError(answer.url, '', ['the body is not JSON']);
  }
}

export function isErrorBody(data: unknown): boolean {
  return (
    typeof data === 'object' &&
    data !== null &&
    !Array.isArray(data) &&
    typeof (data as { error?: unknown }).error === 'string'
  );
}

/**
 * The avatar answer in its three forms: the live 307 with `Location`, the spec's text/plain URL, and
 * "none" (the live SVG placeholder or an empty body); an HTTP-200 JSON error means not found.
 */
export function avatarUrl(answer: HttpAnswer, identity: string): string | null {
  const { status, url } = answer;
  if (status >= 300 && status < 400) {
    const location = header(answer.headers, 'location');
    if (!location) throw new UpstreamError(status, url, answer.body);
    return absoluteUrl(location, url, url);
  }
  if (status === 204) return null;
  if (status !== 200) throw new UpstreamError(status, url, answer.body);
  const contentType = header(answer.headers, 'content-type')?.toLowerCase() ?? '';
  const body = answer.body.trim();
  if (body === '' || contentType.includes('svg') || /^<(\?xml|svg)/i.test(body)) return null;
  if (contentType.includes('json') || body.startsWith('{') || body.startsWith('"')) {
    const data = parseJson(answer);
    if (typeof data === 'string') return absoluteUrl(data, url);
    parseResponse(RawAvatarError, data, url);
    throw new NotFoundError(identity, status, url, answer.body);
  }
  return absoluteUrl(body, url);
}

/** An absolute URL; a relative `Location` is resolved against the request. */
function absoluteUrl(value: string, requestUrl: string, relativeTo?: string): string {
  try {
    return new URL(value.trim(), relativeTo).toString();
  } catch {
    throw new SchemaError(requestUrl, '', ['the avatar answer is not a URL']);
  }
}
