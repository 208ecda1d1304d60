import { createPublicKey, verify } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type FakeDiscord,
  type FakeGuild,
  InteractionFailedError,
  startFakeDiscord,
  type Tamper,
} from '../../../fakes/discord/server.ts';
import { startRoundRobin } from '../../../fakes/roundRobin.ts';

const ALICE = '200000000000000001';
const MAX_SKEW_SECONDS = 300;

interface Received {
  headers: IncomingMessage['headers'];
  // biome-ignore lint/suspicious/noExplicitAny: raw interaction JSON, read freely by the tests.
  interaction: any;
}

type Respond = (received: Received, res: ServerResponse) => void | Promise<void>;

let fake: FakeDiscord;
let guild: FakeGuild;
const closers: (() => Promise<void>)[] = [];

beforeEach(async () => {
  fake = await startFakeDiscord({ interactionAckDeadlineMs: 300 });
  guild = fake.addGuild({ name: 'Test Guild' });
  fake.addMember(guild.id, { id: ALICE, username: 'alice' });
});

afterEach(async () => {
  await Promise.all(closers.splice(0).map((close) => close()));
  await fake.close();
});

/** Checks a request the way a bot must: Ed25519 over timestamp + raw body, and a fresh timestamp. */
function isSigned(publicKeyHex: string, headers: IncomingMessage['headers'], raw: Buffer): boolean {
  const signature = headers['x-signature-ed25519'];
  const timestamp = headers['x-signature-timestamp'];
  if (typeof signature !== 'string' || typeof timestamp !== 'string') return false;
  if (Math.abs(Date.now() / 1000 - Number(timestamp)) > MAX_SKEW_SECONDS) return false;
  const key = createPublicKey({
    key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKeyHex, 'hex').toString('base64url') },
    format: 'jwk',
  });
  try {
    return verify(null, Buffer.concat([Buffer.from(timestamp), raw]), key, Buffer.from(signature, 'hex'));
  } catch {
    return false;
  }
}

/** A minimal Interactions Endpoint: 401 unless signed, PONG to a PING, else `respond`. */
async function startEndpoint(respond: Respond, servedBy?: string) {
  const accepted: Received[] = [];
  let refused = 0;
  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks);
    if (servedBy) res.setHeader('x-served-by', servedBy);
    if (!isSigned(fake.applicationPublicKey, req.headers, raw)) {
      refused += 1;
      res.writeHead(401).end('invalid request signature');
      return;
    }
    const received = { headers: req.headers, interaction: JSON.parse(raw.toString('utf8')) };
    accepted.push(received);
    if (received.interaction.type === 1) {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"type":1}');
      return;
    }
    await respond(received, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/interactions`,
    accepted,
    get refused() {
      return refused;
    },
  };
}

function json(res: ServerResponse, body: unknown): void {
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

const reply: Respond = (_received, res) => json(res, { type: 4, data: { content: 'pong over http' } });

describe('HTTP interactions', () => {
  it('POSTs a signed command and applies the type-4 reply in the response body', async () => {
    const endpoint = await startEndpoint(reply);
    fake.useInteractionsEndpoint(endpoint.url);
    const result = await fake.runCommand({ name: 'ping', userId: ALICE });
    expect(result.message?.content).toBe('pong over http');
    expect(result.callbacks).toEqual([{ type: 4, data: { content: 'pong over http' } }]);
    expect(result.delivery).toMatchObject({ kind: 'command', status: 200, servedBy: null, error: null });
    const [received] = endpoint.accepted;
    expect(received?.headers['user-agent']).toBe('Discord-Interactions/1.0 (+https://discord.com)');
    expect(received?.headers['content-type']).toBe('application/json');
    expect(received?.interaction).toMatchObject({
      type: 2,
      data: { name: 'ping' },
      member: { user: { id: ALICE } },
    });
    // No gateway session was needed and no REST callback was made.
    expect(fake.requests).toEqual([]);
    expect(fake.httpDeliveries).toHaveLength(1);
  });

  it('follows a type-5 deferral with the webhook edit of @original', async () => {
    const endpoint = await startEndpoint(({ interaction }, res) => {
      json(res, { type: 5 });
      setTimeout(() => {
        void fetch(
          `${fake.apiUrl}/v10/webhooks/${fake.applicationId}/${interaction.token}/messages/@original`,
          {
            method: 'PATCH',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ content: 'done after a wait' }),
          },
        );
      }, 20);
    });
    fake.useInteractionsEndpoint(endpoint.url);
    const result = await fake.runCommand({ name: 'slow', userId: ALICE });
    expect(result.callbacks.map((c) => c.type)).toEqual([5]);
    expect(result.message?.content).toBe('done after a wait');
    expect(fake.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      `PATCH /webhooks/${fake.applicationId}/${endpoint.accepted[0]?.interaction.token}/messages/@original`,
    ]);
  });

  it('takes a multipart response with payload_json and files[0]', async () => {
    const endpoint = await startEndpoint(async (_received, res) => {
      const form = new FormData();
      form.append(
        'payload_json',
        JSON.stringify({
          type: 4,
          data: { content: 'card', attachments: [{ id: 0, filename: 'card.png' }] },
        }),
      );
      form.append('files[0]', new Blob([new Uint8Array([1, 2, 3])], { type: 'image/png' }), 'card.png');
      const encoded = new Response(form);
      res.writeHead(200, { 'content-type': encoded.headers.get('content-type') ?? '' });
      res.end(Buffer.from(await encoded.arrayBuffer()));
    });
    fake.useInteractionsEndpoint(endpoint.url);
    const result = await fake.runCommand({ name: 'card', userId: ALICE });
    expect(result.message?.attachments.map((a) => [a.filename, a.size])).toEqual([['card.png', 3]]);
  });

  it.each([
    ['a 500', (_r: Received, res: ServerResponse) => void res.writeHead(500).end(), 500, 'answered 500'],
    ['a body that is not JSON', (_r: Received, res: ServerResponse) => void res.end('ok'), 200, 'not an'],
    ['an invalid callback', (_r: Received, res: ServerResponse) => json(res, { type: 42 }), 200, 'refused'],
    [
      'a late answer',
      (_r: Received, res: ServerResponse) => void setTimeout(() => reply(_r, res), 500),
      null,
      'within',
    ],
  ])('fails the interaction on %s, and records it', async (_what, respond: Respond, status, error) => {
    const endpoint = await startEndpoint(respond);
    fake.useInteractionsEndpoint(endpoint.url);
    const failure = await fake.runCommand({ name: 'ping', userId: ALICE }).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(InteractionFailedError);
    expect((failure as InteractionFailedError).delivery).toMatchObject({ status });
    expect((failure as InteractionFailedError).delivery.error).toContain(error);
    expect(fake.httpDeliveries[0]?.error).toContain(error);
  });

  it('plays autocomplete, button clicks and modals over HTTP too', async () => {
    const button = { type: 2, style: 1, custom_id: 'open', label: 'Open' };
    const input = { type: 4, custom_id: 'address', label: 'Address', style: 1, required: true };
    const modal = { custom_id: 'link', title: 'Link', components: [{ type: 1, components: [input] }] };
    const endpoint = await startEndpoint(({ interaction }, res) => {
      if (interaction.type === 4)
        json(res, { type: 8, data: { choices: [{ name: 'vitalik.eth', value: 'v' }] } });
      else if (interaction.type === 2)
        json(res, { type: 4, data: { content: 'panel', components: [{ type: 1, components: [button] }] } });
      else if (interaction.type === 3) json(res, { type: 9, data: modal });
      else
        json(res, {
          type: 7,
          data: { content: `linked ${interaction.data.components[0].components[0].value}` },
        });
    });
    fake.useInteractionsEndpoint(endpoint.url);
    const typed = await fake.typeInOption({
      name: 'whois',
      focused: 'identity',
      value: 'vit',
      userId: ALICE,
    });
    expect(typed.callbacks[0]?.data.choices).toEqual([{ name: 'vitalik.eth', value: 'v' }]);
    const panel = await fake.runCommand({ name: 'panel', userId: ALICE });
    if (!panel.message) throw new Error('no panel');
    const opened = await fake.clickComponent({ message: panel.message, customId: 'open', userId: ALICE });
    expect(opened.callbacks.map((c) => c.type)).toEqual([9]);
    const submitted = await fake.submitModal({ opened, fields: { address: '0x1' } });
    expect(submitted.message?.content).toBe('linked 0x1');
    expect(submitted.message?.id).toBe(panel.message.id);
    expect(fake.httpDeliveries.map((d) => [d.kind, d.status])).toEqual([
      ['autocomplete', 200],
      ['command', 200],
      ['component', 200],
      ['modal', 200],
    ]);
  });

  it('goes back to the gateway with useInteractionsEndpoint(null)', async () => {
    const endpoint = await startEndpoint(reply);
    fake.useInteractionsEndpoint(endpoint.url);
    fake.useInteractionsEndpoint(null);
    expect(fake.interactionsEndpoint).toBeNull();
    await expect(fake.runCommand({ name: 'ping', userId: ALICE })).rejects.toThrow('no bot is connected');
    expect(endpoint.accepted).toEqual([]);
  });

  it('PINGs like Discord, and saves a URL only when it refuses a bad signature', async () => {
    const endpoint = await startEndpoint(reply);
    const pong = await fake.pingInteractionsEndpoint(endpoint.url);
    expect(pong.status).toBe(200);
    expect(JSON.parse(pong.body)).toEqual({ type: 1 });
    expect(endpoint.accepted[0]?.interaction).toMatchObject({ type: 1, application_id: fake.applicationId });
    const save = await fake.saveInteractionsEndpoint(endpoint.url);
    expect([save.saved, save.valid.status, save.invalid.status]).toEqual([true, 200, 401]);
    expect(fake.interactionsEndpoint).toBe(endpoint.url);
    expect(fake.httpDeliveries.map((d) => [d.kind, d.error])).toEqual([
      ['ping', null],
      ['ping', null],
    ]);
  });
});

describe('raw deliveries for attack tests', () => {
  const modes: [Tamper, number][] = [
    ['none', 200],
    ['unsigned', 401],
    ['forged', 401],
    ['stale', 401],
    ['future', 401],
    ['tampered', 401],
  ];

  it.each(modes)('tamper %s gets %i from a verifying endpoint', async (tamper, status) => {
    const endpoint = await startEndpoint(reply);
    const payload = fake.buildCommandInteraction({ name: 'ping', userId: ALICE });
    expect(payload).toMatchObject({ type: 2, application_id: fake.applicationId, data: { name: 'ping' } });
    const answer = await fake.deliverInteraction({ payload, tamper, url: endpoint.url });
    expect(answer.status).toBe(status);
    expect(endpoint.refused).toBe(status === 401 ? 1 : 0);
    // Not tracked: nothing recorded, no REST call.
    expect(fake.httpDeliveries).toEqual([]);
    expect(fake.requests).toEqual([]);
  });

  it('tampering changes the invoking user by default, or sends what it is told', async () => {
    const seen: string[] = [];
    const server = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      seen.push(Buffer.concat(chunks).toString('utf8'));
      res.writeHead(401).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const payload = fake.buildCommandInteraction({ name: 'ping', userId: ALICE });
    await fake.deliverInteraction({ payload, tamper: 'tampered', url });
    await fake.deliverInteraction({ payload, tamper: 'tampered', url, sendInstead: 'raw text' });
    expect(JSON.parse(seen[0] ?? '').member.user.id).not.toBe(ALICE);
    expect(seen[1]).toBe('raw text');
  });
});

describe('round robin', () => {
  it('alternates upstreams per request and passes signed bodies through unchanged', async () => {
    const a = await startEndpoint(reply, 'replica-a');
    const b = await startEndpoint(reply, 'replica-b');
    const upstreams = [new URL(a.url).origin, new URL(b.url).origin];
    const balancer = await startRoundRobin(upstreams);
    closers.push(() => balancer.close());
    fake.useInteractionsEndpoint(`${balancer.url}/interactions`);
    const servedBy: (string | null | undefined)[] = [];
    for (let index = 0; index < 4; index += 1) {
      const result = await fake.runCommand({ name: 'ping', userId: ALICE });
      servedBy.push(result.delivery?.servedBy);
    }
    expect(servedBy).toEqual(['replica-a', 'replica-b', 'replica-a', 'replica-b']);
    expect(balancer.served).toEqual([...upstreams, ...upstreams]);
    expect([a.accepted.length, b.accepted.length, a.refused + b.refused]).toEqual([2, 2, 0]);
  });

  it('passes method, path, query and the answer status through', async () => {
    const seen: string[] = [];
    const server = createServer((req, res) => {
      seen.push(`${req.method} ${req.url} ${req.headers['x-probe']}`);
      res.writeHead(404, { 'x-served-by': 'only' }).end('nope');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    closers.push(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const balancer = await startRoundRobin([
      `http://127.0.0.1:${(server.address() as AddressInfo).port}/base`,
    ]);
    closers.push(() => balancer.close());
    const answer = await fetch(`${balancer.url}/x?y=1`, { method: 'DELETE', headers: { 'x-probe': 'p' } });
    expect([answer.status, answer.headers.get('x-served-by'), await answer.text()]).toEqual([
      404,
      'only',
      'nope',
    ]);
    expect(seen).toEqual(['DELETE /base/x?y=1 p']);
  });
});
