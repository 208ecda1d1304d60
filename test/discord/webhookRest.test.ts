/** The web replica's interaction-webhook client against a local server playing Discord's answers. */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { InteractionWebhooks, WebhookError } from '../../src/discord/webhookRest.ts';

type Seen = { method: string; url: string; type: string; body: string };
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
    await hooks.post('/webhooks/app/tok', {
      body: { content: 'x' },
      files: [{ name: 'a.csv', data: Buffer.from('1,2') }],
    });
    const upload = d.seen[1];
    expect(upload?.type).toMatch(/^multipart\/form-data; boundary=/);
    expect(upload?.body).toContain('name="payload_json"');
    expect(upload?.body).toContain('filename="a.csv"');
    expect(upload?.body).toContain('1,2');
  });
});
