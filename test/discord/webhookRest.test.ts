/** The interaction-webhook client every process answers through, against a local server playing Discord. */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { InteractionWebhooks, WebhookError } from '../../src/discord/webhookRest.ts';
import type { MessageFile } from '../../src/render/types.ts';

type Seen = { method: string; url: string; type: string; length: string | undefined; body: string };

/** A file whose bytes come from `text`, counting how often it was opened. */
function fileOf(
  name: string,
  text: string,
  size = Buffer.byteLength(text),
): MessageFile & { opened: number } {
  const file = {
    name,
    contentType: 'text/csv; charset=utf-8',
    size,
    opened: 0,
    open: () => {
      file.opened += 1;
      return Readable.from([Buffer.from(text)]);
    },
  };
  return file;
}
const closers: (() => void)[] = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

async function discord(
  answers: { status: number; body?: unknown }[],
): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer(async (req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    seen.push({
      method: req.method ?? '',
      url: req.url ?? '',
      type: req.headers['content-type'] ?? '',
      length: req.headers['content-length'],
      body: Buffer.concat(chunks).toString(),
    });
    const answer = answers.shift() ?? { status: 204 };
    res.writeHead(answer.status, { 'content-type': 'application/json' });
    res.end(answer.body === undefined ? '' : JSON.stringify(answer.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => server.close());
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api`, seen };
}

describe('InteractionWebhooks', () => {
  it('sends JSON under /api/v10 without a token, waits out a 429, and returns the answer', async () => {
    const d = await discord([
      { status: 429, body: { retry_after: 0.05, global: false } },
      { status: 200, body: { id: '1' } },
    ]);
    const answer = await new InteractionWebhooks(d.url).patch('/webhooks/app/tok/messages/@original', {
      body: { content: 'hi' },
      auth: false,
    });
    expect(answer).toEqual({ id: '1' });
    expect(d.seen.map((s) => [s.method, s.url, s.type, s.body])).toEqual([
      ['PATCH', '/api/v10/webhooks/app/tok/messages/@original', 'application/json', '{"content":"hi"}'],
      ['PATCH', '/api/v10/webhooks/app/tok/messages/@original', 'application/json', '{"content":"hi"}'],
    ]);
  });

  it("throws Discord's status and code, and sends files as multipart with payload_json", async () => {
    const d = await discord([
      { status: 404, body: { code: 10015, message: 'Unknown Webhook' } },
      { status: 200, body: {} },
    ]);
    const hooks = new InteractionWebhooks(d.url);
    const error = await hooks.delete('/webhooks/app/tok/messages/@original').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WebhookError);
    expect(error).toMatchObject({ status: 404, code: 10015 });
    await hooks.post('/webhooks/app/tok', { body: { content: 'x' }, files: [fileOf('a.csv', '1,2')] });
    const upload = d.seen[1];
    expect(upload?.type).toMatch(/^multipart\/form-data; boundary=/);
    expect(upload?.body).toContain('name="payload_json"');
    expect(upload?.body).toContain('filename="a.csv"');
    expect(upload?.body).toContain('1,2');
    await hooks.close();
    // A bot stopped twice closes it twice.
    await hooks.close();
  });

  it('states the upload’s length, and after a 429 sends the files again, read from their first byte', async () => {
    const d = await discord([{ status: 429, body: { retry_after: 0.01, global: false } }, { status: 200 }]);
    const hooks = new InteractionWebhooks(d.url);
    const members = fileOf('members.csv', 'member_id\r\n1\r\n');
    await hooks.patch('/webhooks/app/tok/messages/@original', { body: { content: '' }, files: [members] });
    expect(members.opened).toBe(2);
    expect(d.seen).toHaveLength(2);
    for (const seen of d.seen) {
      expect(Number(seen.length)).toBe(Buffer.byteLength(seen.body));
      const form = await new Response(seen.body, { headers: { 'content-type': seen.type } }).formData();
      expect(await (form.get('files[0]') as File).text()).toBe('member_id\r\n1\r\n');
    }
    await hooks.close();
  });

  it('fails, and sends nothing Discord would take, when a file is not the size it was said to be', async () => {
    const d = await discord([]);
    const hooks = new InteractionWebhooks(d.url);
    const changed = fileOf('members.csv', 'grew since it was measured', 5);
    const sent = hooks.post('/webhooks/app/tok', { body: {}, files: [changed] });
    await expect(sent).rejects.toThrow();
    expect(d.seen).toEqual([]);
    await hooks.close();
  });
});
