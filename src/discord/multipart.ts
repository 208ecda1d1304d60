/**
 * A message with attachments as Discord takes it: a multipart/form-data body (RFC 7578) of `payload_json`
 * and `files[n]`. Written part by part, each file streamed from its source and never held whole; every
 * file's size is known first, so the body's length is stated before its first byte.
 * @see https://discord.com/developers/docs/reference#uploading-files
 * @see https://www.rfc-editor.org/rfc/rfc7578
 */
import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import type { MessageFile } from '../render/types.ts';

export interface MultipartBody {
  body: Readable;
  /** `multipart/form-data; boundary=…` */
  contentType: string;
  /** Bytes in `body`. */
  length: number;
}

const CRLF = Buffer.from('\r\n');

/**
 * A field or file name inside a quoted header value, escaped as browsers do (WHATWG's multipart/form-data
 * encoding): a quote, CR or LF could otherwise end the value or the header.
 */
function quoted(name: string): string {
  return name.replaceAll('"', '%22').replaceAll('\r', '%0D').replaceAll('\n', '%0A');
}

/** The body for `payload` (sent as `payload_json`) with `files` as `files[0]`, `files[1]`, …; made once per send. */
export function multipartBody(payload: unknown, files: readonly MessageFile[]): MultipartBody {
  const boundary = `web3bio-${randomBytes(16).toString('hex')}`;
  const json = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="payload_json"\r\n` +
      `Content-Type: application/json\r\n\r\n${JSON.stringify(payload)}\r\n`,
  );
  const heads = files.map((file, index) =>
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="files[${index}]"; filename="${quoted(file.name)}"\r\n` +
        `Content-Type: ${file.contentType}\r\n\r\n`,
    ),
  );
  const tail = Buffer.from(`--${boundary}--\r\n`);
  const length =
    json.byteLength +
    heads.reduce(
      (sum, head, index) => sum + head.byteLength + (files[index]?.size ?? 0) + CRLF.byteLength,
      0,
    ) +
    tail.byteLength;

  async function* parts(): AsyncGenerator<Buffer> {
    yield json;
    for (const [index, file] of files.entries()) {
      yield heads[index] as Buffer;
      let sent = 0;
      for await (const chunk of file.open()) {
        const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
        sent += bytes.byteLength;
        if (sent > file.size) break;
        yield bytes;
      }
      // The stated length must hold: a file that changed since its size was taken fails the request.
      if (sent !== file.size) throw new Error(`${file.name} is not ${file.size} bytes long any more`);
      yield CRLF;
    }
    yield tail;
  }
  return {
    body: Readable.from(parts(), { objectMode: false }),
    contentType: `multipart/form-data; boundary=${boundary}`,
    length,
  };
}
