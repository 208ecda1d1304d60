/**
 * A stand-in Farcaster Auth relay (the `relay.farcaster.xyz` API of farcasterxyz/auth-monorepo
 * `apps/relay`), and the member's Farcaster app that approves a sign-in on it.
 *
 * - `POST /v1/channel` opens a channel for an app (`siweUri`, `domain`, `nonce`, `notBefore`,
 *   `expirationTime`, `requestId`, `acceptAuthAddress`): 201 `{ channelToken, url, connectUri, nonce }`.
 * - `GET /v1/channel/status` with `Authorization: Bearer <channelToken>`: 202 and the channel while
 *   pending; 200 and the signed message once completed, and the channel is closed (a second read is
 *   401, as on the real relay); 401 for a channel it does not know.
 * - `POST /v1/channel/authenticate`: what the member's app sends (the relay key in
 *   `X-Farcaster-Auth-Relay-Key`).
 *
 * `approve` plays the member's app: it builds the Sign In With Farcaster message from the channel's
 * parameters, exactly as `@farcaster/auth-client`'s `buildSignInMessage` does, signs it with a key the
 * test holds, and completes the channel; its overrides play every misbehaviour (another FID, another
 * domain or nonce, a replay). `GET /~/siwf?channelToken=…` is the approval link: a small page with an
 * "Approve" button for each demo account, for running the bot offline by hand.
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Hex, LocalAccount } from 'viem';
import { createSiweMessage, generateSiweNonce } from 'viem/siwe';

/** What an app asks when it opens a channel. */
export interface ChannelParams {
  siweUri: string;
  domain: string;
  nonce?: string;
  notBefore?: string;
  expirationTime?: string;
  requestId?: string;
  redirectUrl?: string;
  acceptAuthAddress?: boolean;
}

export interface FakeChannel {
  token: string;
  state: 'pending' | 'completed';
  nonce: string;
  url: string;
  signatureParams: ChannelParams & { nonce: string };
  acceptAuthAddress: boolean;
  message?: string;
  signature?: Hex;
  fid?: number;
  authMethod?: 'custody' | 'authAddress';
  username?: string;
  custody?: string;
  /** How many times `GET /v1/channel/status` read it. */
  reads: number;
}

/** How the member's app signs: its key, its FID, and anything it gets wrong on purpose. */
export interface Approval {
  account: LocalAccount;
  fid: number;
  authMethod?: 'custody' | 'authAddress';
  username?: string;
  /** Overrides of the message's fields (another domain, nonce, URI, request id, statement, times…). */
  domain?: string;
  nonce?: string;
  uri?: string;
  requestId?: string | null;
  statement?: string;
  chainId?: number;
  issuedAt?: Date;
  expirationTime?: Date | null;
  /** A whole message to sign instead of the one built from the channel (a message for another app). */
  message?: string;
  /** A signature to send instead of the account's (a forged or foreign one). */
  signature?: Hex;
}

/** A demo account the approval page offers (for `npm run fake-api`). */
export interface DemoAccount {
  account: LocalAccount;
  fid: number;
  username: string;
}

export interface FakeRelay {
  readonly url: string;
  /** The channels opened so far, by token (closed ones included, marked by `closed`). */
  readonly channels: Map<string, FakeChannel>;
  /** Tokens of channels that were read completed (and so closed). */
  readonly closed: Set<string>;
  /** Every request, in order: method, path and (for POSTs) the JSON body. */
  readonly requests: { method: string; path: string; body?: unknown }[];
  /** The channel opened last. */
  lastChannel(): FakeChannel | undefined;
  /** The member's app approves the channel `token` (see `Approval`). */
  approve(token: string, approval: Approval): Promise<FakeChannel>;
  /** A channel already read and closed answers its completed status again (a replayed channel). */
  reopen(token: string): void;
  /**
   * `down`: every request answers 503; `hang`: requests get no answer until `up`; `flood`: every request
   * answers 200 with a 256 MiB body, streamed as the reader takes it (see `floods`); `up`: answers.
   */
  setMode(mode: 'up' | 'down' | 'hang' | 'flood'): void;
  /** Each flooded answer: the bytes written, whether the connection closed, and whether it all went. */
  readonly floods: { bytes: number; closed: boolean; finished: boolean }[];
  /** The accounts the approval page offers. */
  setDemoAccounts(accounts: DemoAccount[]): void;
  close(): Promise<void>;
}

const FLOOD_BYTES = 256 * 1024 * 1024;
const TOKEN_ALPHABET = '23456789ABCDEFGHJKLMNPQRSTUVWXYZ';
const DOMAIN = /^[a-zA-Z0-9.-]+(:[0-9]+)?$/;
const PARAM_KEYS = new Set([
  'siweUri',
  'domain',
  'nonce',
  'notBefore',
  'expirationTime',
  'requestId',
  'redirectUrl',
  'acceptAuthAddress',
]);

/** The message an honest Farcaster app builds for a channel (auth-client `messages/build.ts`). */
export function signInMessage(channel: FakeChannel, approval: Approval): string {
  const p = channel.signatureParams;
  const requestId = approval.requestId === undefined ? p.requestId : approval.requestId;
  const expiration =
    approval.expirationTime === undefined
      ? p.expirationTime
        ? new Date(p.expirationTime)
        : undefined
      : approval.expirationTime;
  return createSiweMessage({
    domain: approval.domain ?? p.domain,
    address: approval.account.address,
    statement: approval.statement ?? 'Farcaster Auth',
    uri: approval.uri ?? p.siweUri,
    version: '1',
    chainId: approval.chainId ?? 10,
    nonce: approval.nonce ?? p.nonce,
    issuedAt: approval.issuedAt ?? new Date(),
    ...(expiration ? { expirationTime: expiration } : {}),
    ...(p.notBefore ? { notBefore: new Date(p.notBefore) } : {}),
    ...(requestId ? { requestId } : {}),
    resources: [`farcaster://fid/${approval.fid}`],
  });
}

export async function startFakeRelay(options: { port?: number; authKey?: string } = {}): Promise<FakeRelay> {
  const channels = new Map<string, FakeChannel>();
  const closed = new Set<string>();
  const requests: FakeRelay['requests'] = [];
  const authKey = options.authKey ?? 'fake-relay-key';
  let mode: 'up' | 'down' | 'hang' | 'flood' = 'up';
  const floods: FakeRelay['floods'] = [];
  let demo: DemoAccount[] = [];
  const hanging: ServerResponse[] = [];
  let base = '';

  const send = (res: ServerResponse, status: number, body: unknown) =>
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));

  /** A 256 MiB answer, written only as fast as the reader reads it, until it closes the connection. */
  function flood(res: ServerResponse): void {
    const sent = { bytes: 0, closed: false, finished: false };
    floods.push(sent);
    const chunk = Buffer.alloc(64 * 1024, 0x20);
    let gone = false;
    res.on('close', () => {
      gone = true;
      sent.closed = true;
    });
    res.writeHead(200, { 'content-type': 'application/json' }).write('{"state":"pending"');
    const pump = () => {
      while (!gone && sent.bytes < FLOOD_BYTES) {
        sent.bytes += chunk.length;
        if (!res.write(chunk)) return void res.once('drain', pump);
      }
      if (!gone) res.end('}', () => Object.assign(sent, { finished: true }));
    };
    pump();
  }

  function newToken(): string {
    const bytes = randomBytes(8);
    return Array.from(bytes, (b) => TOKEN_ALPHABET[b % TOKEN_ALPHABET.length]).join('');
  }

  function open(body: unknown): { status: number; body: unknown } {
    if (typeof body !== 'object' || body === null)
      return { status: 400, body: { error: 'Validation error' } };
    const params = body as Record<string, unknown>;
    const extra = Object.keys(params).find((k) => !PARAM_KEYS.has(k));
    const valid =
      extra === undefined &&
      typeof params.siweUri === 'string' &&
      URL.canParse(params.siweUri) &&
      typeof params.domain === 'string' &&
      DOMAIN.test(params.domain);
    if (!valid) return { status: 400, body: { error: 'Validation error' } };
    if ((params.domain as string).includes('farcaster.xyz'))
      return { status: 400, body: { error: 'Domain not allowed' } };
    const token = newToken();
    const nonce = typeof params.nonce === 'string' ? params.nonce : generateSiweNonce();
    const url = `${base}/~/siwf?channelToken=${token}`;
    const channel: FakeChannel = {
      token,
      state: 'pending',
      nonce,
      url,
      signatureParams: { ...(params as unknown as ChannelParams), nonce },
      acceptAuthAddress: params.acceptAuthAddress !== false,
      reads: 0,
    };
    channels.set(token, channel);
    return { status: 201, body: { channelToken: token, url, connectUri: url, nonce } };
  }

  function statusOf(token: string | undefined): { status: number; body: unknown } {
    const channel = token === undefined ? undefined : channels.get(token);
    if (!channel || closed.has(channel.token)) return { status: 401, body: { error: 'Unauthorized' } };
    channel.reads += 1;
    const { url: _url, token: _token, reads: _reads, ...view } = channel;
    if (channel.state !== 'completed') return { status: 202, body: view };
    closed.add(channel.token);
    return { status: 200, body: view };
  }

  async function approve(token: string, approval: Approval): Promise<FakeChannel> {
    const channel = channels.get(token);
    if (!channel) throw new Error(`no channel ${token}`);
    const message = approval.message ?? signInMessage(channel, approval);
    const signature = approval.signature ?? (await approval.account.signMessage({ message }));
    Object.assign(channel, {
      state: 'completed',
      message,
      signature,
      fid: approval.fid,
      authMethod: approval.authMethod ?? 'custody',
      username: approval.username ?? `fid${approval.fid}`,
      custody: approval.account.address.toLowerCase(),
    });
    return channel;
  }

  async function authenticate(
    token: string | undefined,
    key: string | undefined,
    body: unknown,
  ): Promise<{ status: number; body: unknown }> {
    if (key !== authKey) return { status: 401, body: { error: 'Unauthorized' } };
    const channel = token === undefined ? undefined : channels.get(token);
    if (!channel || closed.has(channel.token)) return { status: 401, body: { error: 'Unauthorized' } };
    const b = (body ?? {}) as { message?: unknown; signature?: unknown; fid?: unknown; authMethod?: unknown };
    if (typeof b.message !== 'string' || typeof b.signature !== 'string' || typeof b.fid !== 'number')
      return { status: 400, body: { error: 'Validation error' } };
    Object.assign(channel, {
      state: 'completed',
      message: b.message,
      signature: b.signature,
      fid: b.fid,
      authMethod: b.authMethod === 'authAddress' ? 'authAddress' : 'custody',
    });
    return { status: 201, body: channel };
  }

  /** The approval link's page: the stand-in for the member's Farcaster app, for offline runs. */
  function approvalPage(token: string | null): string {
    const channel = token === null ? undefined : channels.get(token);
    const html = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
    if (!channel || closed.has(channel.token) || channel.state === 'completed')
      return '<!doctype html><title>Stand-in Farcaster app</title><p>This sign-in request is gone or was already answered.</p>';
    const p = channel.signatureParams;
    const buttons = demo
      .map(
        (d) =>
          `<form method="post" action="/~/siwf/approve"><input type="hidden" name="channelToken" value="${html(channel.token)}"><input type="hidden" name="fid" value="${d.fid}"><button>Approve as @${html(d.username)} (FID ${d.fid})</button></form>`,
      )
      .join('\n');
    return `<!doctype html><meta charset="utf-8"><title>Stand-in Farcaster app</title>
<h1>Sign in to ${html(p.domain)}?</h1>
<p>Request: <code>${html(p.requestId ?? '')}</code></p>
${buttons || '<p>No demo accounts are set up.</p>'}`;
  }

  async function handle(req: IncomingMessage, res: ServerResponse, raw: string): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://relay.invalid');
    const parse = () => {
      try {
        return raw === '' ? undefined : (JSON.parse(raw) as unknown);
      } catch {
        return undefined;
      }
    };
    const bearer = req.headers.authorization?.split(' ')[1];
    requests.push({ method: req.method ?? 'GET', path: url.pathname, ...(raw ? { body: parse() } : {}) });
    if (mode === 'down') return void send(res, 503, { error: 'Service Unavailable' });
    if (mode === 'hang') return void hanging.push(res);
    if (mode === 'flood') return flood(res);
    if (req.method === 'POST' && url.pathname === '/v1/channel') {
      const answer = open(parse());
      return void send(res, answer.status, answer.body);
    }
    if (req.method === 'GET' && url.pathname === '/v1/channel/status') {
      const answer = statusOf(bearer);
      return void send(res, answer.status, answer.body);
    }
    if (req.method === 'POST' && url.pathname === '/v1/channel/authenticate') {
      const key = req.headers['x-farcaster-auth-relay-key'];
      const answer = await authenticate(bearer, typeof key === 'string' ? key : undefined, parse());
      return void send(res, answer.status, answer.body);
    }
    if (req.method === 'GET' && url.pathname === '/~/siwf') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      return void res.end(approvalPage(url.searchParams.get('channelToken')));
    }
    if (req.method === 'POST' && url.pathname === '/~/siwf/approve') {
      const form = new URLSearchParams(raw);
      const account = demo.find((d) => String(d.fid) === form.get('fid'));
      const token = form.get('channelToken') ?? '';
      if (!account || !channels.has(token))
        return void send(res, 400, { error: 'Unknown account or channel' });
      await approve(token, { account: account.account, fid: account.fid, username: account.username });
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      return void res.end(
        '<!doctype html><title>Approved</title><p>Approved. Go back to the page you came from.</p>',
      );
    }
    send(res, 404, { error: 'Not Found' });
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      handle(req, res, Buffer.concat(chunks).toString('utf8')).catch((error: unknown) =>
        send(res, 500, { error: String(error) }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: base,
    channels,
    closed,
    requests,
    floods,
    lastChannel: () => [...channels.values()].at(-1),
    approve,
    reopen(token) {
      closed.delete(token);
    },
    setMode(next) {
      mode = next;
      if (next !== 'hang') for (const res of hanging.splice(0)) res.destroy();
    },
    setDemoAccounts(accounts) {
      demo = accounts;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging.splice(0)) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
