import type { IncomingMessage, ServerResponse } from 'node:http';
import type { UploadedFile } from './messages.ts';

/** A prepared HTTP answer. */
export interface Answer {
  readonly status: number;
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
}

/** A REST request after reading its body. */
export interface ParsedRequest {
  readonly method: string;
  /** The route below `/api/v{N}`, percent-decoded (`@original`, not `%40original`). */
  readonly path: string;
  readonly query: URLSearchParams;
  /** Lower-cased header names. */
  readonly headers: Record<string, string>;
  /** Parsed JSON, or a multipart request's `payload_json`; null when there was no body. */
  readonly body: unknown;
  readonly files: UploadedFile[];
}

const MAX_BODY_BYTES = 30 * 1024 * 1024;

/** Discord's error shape: `{ message, code }`. */
export function apiError(status: number, code: number, message: string): Answer {
  return { status, body: { message, code } };
}

export const noContent: Answer = { status: 204 };

/** Reads and parses a JSON or multipart (`payload_json` + `files[n]`) body. */
export async function readBody(
  req: IncomingMessage,
): Promise<{ body: unknown; files: UploadedFile[] } | Answer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).byteLength;
    if (size > MAX_BODY_BYTES) return apiError(413, 40_005, 'Request entity too large');
    chunks.push(chunk as Buffer);
  }
  return parseBody(Buffer.concat(chunks), req.headers['content-type'] ?? '');
}

/** Parses a raw JSON or multipart (`payload_json` + `files[n]`) body; a 400 50109 when it does not parse. */
export async function parseBody(
  raw: Buffer,
  contentType: string,
): Promise<{ body: unknown; files: UploadedFile[] } | Answer> {
  if (raw.byteLength === 0) return { body: null, files: [] };
  try {
    if (contentType.startsWith('multipart/form-data')) return await readMultipart(raw, contentType);
    if (contentType.startsWith('application/x-www-form-urlencoded')) {
      return { body: Object.fromEntries(new URLSearchParams(raw.toString('utf8'))), files: [] };
    }
    return { body: JSON.parse(raw.toString('utf8')), files: [] };
  } catch {
    return apiError(400, 50_109, 'The request body contains invalid JSON.');
  }
}

async function readMultipart(
  raw: Buffer,
  contentType: string,
): Promise<{ body: unknown; files: UploadedFile[] }> {
  const form = await new Response(new Uint8Array(raw), {
    headers: { 'content-type': contentType },
  }).formData();
  let body: unknown = null;
  const files: UploadedFile[] = [];
  for (const [field, value] of form.entries()) {
    if (typeof value === 'string') {
      if (field === 'payload_json') body = JSON.parse(value);
      continue;
    }
    files.push({
      field,
      filename: value.name,
      contentType: value.type || 'application/octet-stream',
      data: new Uint8Array(await value.arrayBuffer()),
    });
  }
  return { body, files };
}

/** Writes an answer as JSON (or an empty 204). */
export function writeAnswer(res: ServerResponse, answer: Answer): void {
  const headers: Record<string, string> = { ...answer.headers };
  if (answer.body === undefined) {
    res.writeHead(answer.status, headers).end();
    return;
  }
  if (answer.body instanceof Uint8Array) {
    res.writeHead(answer.status, headers).end(answer.body);
    return;
  }
  headers['Content-Type'] = 'application/json';
  res.writeHead(answer.status, headers).end(JSON.stringify(answer.body));
}
