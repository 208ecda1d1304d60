/**
 * How the web app answers: JSON and plain text under the app's strict default headers (set once, in
 * `app.ts`, by @fastify/helmet), HTML with a fresh CSP nonce that allows its own inline style and
 * script only, and cookies that are HttpOnly and SameSite=Lax.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply } from 'fastify';

export function sendJson(reply: FastifyReply, status: number, body: unknown): FastifyReply {
  return reply.code(status).type('application/json; charset=utf-8').send(JSON.stringify(body));
}

export function sendText(reply: FastifyReply, status: number, body: string): FastifyReply {
  return reply.code(status).type('text/plain; charset=utf-8').send(body);
}

/**
 * An HTML page rendered with a fresh CSP nonce that allows its inline style and script only; `locale`
 * (the page's `<html lang>`) is sent as Content-Language.
 */
export function sendHtml(
  reply: FastifyReply,
  status: number,
  render: (cspNonce: string) => string,
  options: { formAction?: 'self'; locale?: string; images?: readonly string[] } = {},
): FastifyReply {
  const cspNonce = randomBytes(16).toString('base64');
  const csp = [
    "default-src 'none'",
    `script-src 'nonce-${cspNonce}'`,
    `style-src 'nonce-${cspNonce}'`,
    ...(options.images?.length ? [`img-src ${options.images.join(' ')}`] : []),
    "connect-src 'self'",
    "base-uri 'none'",
    options.formAction === 'self' ? "form-action 'self'" : "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
  if (options.locale) reply.header('content-language', options.locale);
  return reply
    .code(status)
    .header('content-security-policy', csp)
    .type('text/html; charset=utf-8')
    .send(render(cspNonce));
}

/** A 303 to `location` (a URL this server built, never one taken from the request). */
export function redirect(reply: FastifyReply, location: string): FastifyReply {
  return reply.redirect(location, 303);
}

/** A 405 naming the methods the route has. */
export function methodNotAllowed(reply: FastifyReply, allow: string): FastifyReply {
  return sendJson(reply.header('allow', allow), 405, { ok: false, message: 'Method not allowed.' });
}

const COMMON_METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH'] as const;

/** Answers 405 (naming `allow`) to the common methods `url` has no route for. */
export function refuseOtherMethods(app: FastifyInstance, url: string, allow: string): void {
  const method = COMMON_METHODS.filter((m) => !allow.split(', ').includes(m));
  app.route({ method, url, handler: (_request, reply) => methodNotAllowed(reply, allow) });
}

export interface CookieOptions {
  path: string;
  maxAgeSeconds: number;
  secure: boolean;
}

/** Sets a cookie (HttpOnly, SameSite=Lax, so it survives the top-level return from Discord). */
export function setCookie(reply: FastifyReply, name: string, value: string, options: CookieOptions): void {
  reply.setCookie(name, value, {
    path: options.path,
    maxAge: Math.max(0, Math.floor(options.maxAgeSeconds)),
    httpOnly: true,
    sameSite: 'lax',
    secure: options.secure,
  });
}

/** A path below PUBLIC_URL (which may sit below a prefix on a reverse proxy); `absolute` adds the origin. */
export function publicPath(publicUrl: string, path: string, absolute = false): string {
  const base = new URL(publicUrl);
  return `${absolute ? base.origin : ''}${base.pathname.replace(/\/+$/, '')}${path}`;
}

/** Cookie options for `path` below PUBLIC_URL: Secure when PUBLIC_URL is https. */
export function cookieOptions(publicUrl: string, path: string, maxAgeSeconds: number): CookieOptions {
  return {
    path: publicPath(publicUrl, path),
    maxAgeSeconds,
    secure: new URL(publicUrl).protocol === 'https:',
  };
}

/** The subset of a pino logger the web app uses. */
export interface WebLogger {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export const NO_LOG: WebLogger = { info() {}, warn() {}, error() {} };

export function errorSummary(error: unknown): { name: string; message: string } {
  return error instanceof Error
    ? { name: error.name, message: error.message.slice(0, 200) }
    : { name: 'unknown', message: String(error).slice(0, 200) };
}
