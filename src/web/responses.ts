/**
 * Response helpers shared by the bot's public pages: strict security headers on every answer, never
 * cached, a per-response CSP nonce for HTML, and cookies that are HttpOnly and SameSite=Lax.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

const BASE_HEADERS: Record<string, string> = {
  'cache-control': 'no-store, max-age=0',
  pragma: 'no-cache',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=(), usb=()',
};
const NON_HTML_CSP = "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

export function send(
  res: ServerResponse,
  status: number,
  contentType: string,
  body: string,
  csp = NON_HTML_CSP,
): void {
  res.writeHead(status, {
    ...BASE_HEADERS,
    'content-security-policy': csp,
    'content-type': contentType,
    'content-length': Buffer.byteLength(body),
  });
  res.end(body);
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  send(res, status, 'application/json; charset=utf-8', JSON.stringify(body));
}

/** An HTML page rendered with a fresh CSP nonce that allows its inline style and script only. */
export function sendHtml(
  res: ServerResponse,
  status: number,
  render: (cspNonce: string) => string,
  options: { formAction?: 'self' } = {},
): void {
  const cspNonce = randomBytes(16).toString('base64');
  const csp = [
    "default-src 'none'",
    `script-src 'nonce-${cspNonce}'`,
    `style-src 'nonce-${cspNonce}'`,
    "connect-src 'self'",
    "base-uri 'none'",
    options.formAction === 'self' ? "form-action 'self'" : "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
  send(res, status, 'text/html; charset=utf-8', render(cspNonce), csp);
}

/** An answer with no body (a 204 acknowledgement, or a refusal that owes no explanation). */
export function sendEmpty(res: ServerResponse, status: number): void {
  res.writeHead(status, {
    ...BASE_HEADERS,
    'content-security-policy': NON_HTML_CSP,
    // A 204 carries no Content-Length at all (RFC 9110, 8.6).
    ...(status === 204 ? {} : { 'content-length': 0 }),
  });
  res.end();
}

/** A 303 to `location` (a URL this server built, never one taken from the request). */
export function redirect(res: ServerResponse, location: string): void {
  res.writeHead(303, {
    ...BASE_HEADERS,
    'content-security-policy': NON_HTML_CSP,
    location,
    'content-length': 0,
  });
  res.end();
}

export interface CookieOptions {
  path: string;
  maxAgeSeconds: number;
  secure: boolean;
}

/** Adds a Set-Cookie header (HttpOnly, SameSite=Lax, so it survives the top-level return from Discord). */
export function setCookie(res: ServerResponse, name: string, value: string, options: CookieOptions): void {
  const cookie = [
    `${name}=${value}`,
    `Path=${options.path}`,
    `Max-Age=${Math.max(0, Math.floor(options.maxAgeSeconds))}`,
    'HttpOnly',
    'SameSite=Lax',
    ...(options.secure ? ['Secure'] : []),
  ].join('; ');
  const previous = res.getHeader('set-cookie');
  const list = Array.isArray(previous) ? previous : previous === undefined ? [] : [String(previous)];
  res.setHeader('set-cookie', [...list, cookie]);
}

/** One cookie's value from the request, or undefined (the first one wins when a name repeats). */
export function readCookie(req: IncomingMessage, name: string): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1) continue;
    if (part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** The raw body, or undefined when it exceeds `limit` bytes (reading stops there). */
export function readBody(req: IncomingMessage, limit: number): Promise<Buffer | undefined> {
  if (Number(req.headers['content-length'] ?? 0) > limit) {
    req.resume();
    return Promise.resolve(undefined);
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        req.removeAllListeners('data');
        req.resume();
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}
