/** A message with files as one multipart/form-data body, read back by a standard parser (undici's). */
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { multipartBody } from '../../src/discord/multipart.ts';
import type { MessageFile } from '../../src/render/types.ts';

const file = (name: string, bytes: Buffer, contentType = 'text/csv; charset=utf-8'): MessageFile => ({
  name,
  contentType,
  size: bytes.byteLength,
  open: () => Readable.from([bytes.subarray(0, 3), bytes.subarray(3)]),
});

describe('multipartBody', () => {
  it('holds payload_json and each file byte for byte, at the length it states', async () => {
    const csv = Buffer.from('\uFEFFmember_id,username\r\n1,Zoë\r\n');
    const gz = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3, 0xff, 0]);
    const form = multipartBody({ content: 'Zoë · 3 files', attachments: [{ id: 0 }] }, [
      file('members.csv', csv),
      file('roles.csv.gz', gz, 'application/gzip'),
    ]);
    const parsed = await new Response(await bodyOf(form), {
      headers: { 'content-type': form.contentType },
    }).formData();
    expect(JSON.parse(parsed.get('payload_json') as string)).toEqual({
      content: 'Zoë · 3 files',
      attachments: [{ id: 0 }],
    });
    const members = parsed.get('files[0]') as File;
    expect(members.name).toBe('members.csv');
    expect(Buffer.from(await members.arrayBuffer())).toEqual(csv);
    const roles = parsed.get('files[1]') as File;
    expect(roles.type).toBe('application/gzip');
    expect(Buffer.from(await roles.arrayBuffer())).toEqual(gz);
  });

  it('escapes a quote, CR or LF in a file name, so the name cannot end its header or add a part', async () => {
    const name = 'a"; name="payload_json\r\nX: 1.csv';
    const form = multipartBody({}, [file(name, Buffer.from('x'))]);
    const bytes = await bodyOf(form);
    expect(Buffer.from(bytes).toString()).toContain('filename="a%22; name=%22payload_json%0D%0AX: 1.csv"');
    const parsed = await new Response(bytes, { headers: { 'content-type': form.contentType } }).formData();
    expect([...parsed.keys()]).toEqual(['payload_json', 'files[0]']);
    expect((parsed.get('files[0]') as File).name).toBe(name);
    expect(JSON.parse(parsed.get('payload_json') as string)).toEqual({});
  });
});

async function bodyOf(form: ReturnType<typeof multipartBody>): Promise<Uint8Array<ArrayBuffer>> {
  const chunks: Buffer[] = [];
  for await (const chunk of form.body) chunks.push(chunk as Buffer);
  const bytes = Buffer.concat(chunks);
  expect(bytes.byteLength).toBe(form.length);
  return Uint8Array.from(bytes);
}
