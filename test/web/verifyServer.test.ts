import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildSiweMessage, type SiweConfig } from '../../src/gating/proofs/challengeMessage.ts';
import { createChallenge, type NonceRecord } from '../../src/gating/proofs/siwe.ts';
import type { SignatureLinkResult } from '../../src/gating/types.ts';
import { openSqliteStore } from '../../src/store/sqliteStore.ts';
import type { GatingStore } from '../../src/store/types.ts';
import type { WebLogger } from '../../src/web/responses.ts';
import { startWebServer, type WebServer } from '../../src/web/server.ts';

const GUILD = '111111111111111111';
const USER = '222222222222222222';
const member = privateKeyToAccount(generatePrivateKey());

let store: GatingStore;
let server: WebServer;
let clock: number;
let siwe: SiweConfig;
let verified: { record: NonceRecord; address: string }[];
let failVerified: boolean;
let linkOutcome: SignatureLinkResult;
let logs: unknown[];

beforeEach(async () => {
  store = await openSqliteStore(':memory:');
  clock = Date.now();
  siwe = { publicUrl: 'https://bot.example.org', now: () => clock };
  verified = [];
  failVerified = false;
  linkOutcome = { ok: true };
  logs = [];
  const capture = (obj: object, msg?: string) => logs.push({ ...obj, msg });
  const logger: WebLogger = { info: capture, warn: capture, error: capture };
  server = await startWebServer({
    port: 0,
    host: '127.0.0.1',
    store,
    siwe,
    logger,
    onVerified: async (result) => {
      if (failVerified) throw new Error('database is down');
      verified.push(result);
      return linkOutcome;
    },
  });
});
afterEach(async () => {
  await server.close();
  await store.close();
});

async function challenge(identity = 'vitalik.eth') {
  const created = await createChallenge(store, siwe, {
    guildId: GUILD,
    userId: USER,
    userName: 'alice',
    guildName: 'Web3 Lounge',
    identity,
    address: member.address,
  });
  const record = await store.getNonce(created.nonce);
  if (!record) throw new Error('not stored');
  return { nonce: created.nonce, message: buildSiweMessage(siwe, record) };
}

function post(nonce: string, body: unknown, contentType = 'application/json') {
  return fetch(`${server.url}/verify/${nonce}`, {
    method: 'POST',
    headers: { 'content-type': contentType },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

describe('verify server', () => {
  it('answers /healthz with ok', async () => {
    const res = await fetch(`${server.url}/healthz`);
    expect(res.status).toBe(200);
    await expect(res.text()).resolves.toBe('ok');
  });

  it('serves the page with a per-response CSP nonce, no external sources and strict headers', async () => {
    const { nonce } = await challenge();
    const [first, second] = await Promise.all([
      fetch(`${server.url}/verify/${nonce}`),
      fetch(`${server.url}/verify/${nonce}`),
    ]);
    const csp = first.headers.get('content-security-policy') ?? '';
    const scriptNonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1];
    expect(scriptNonce).toBeDefined();
    expect(second.headers.get('content-security-policy')).not.toBe(csp);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/https?:|\*|unsafe/);
    expect(first.headers.get('x-frame-options')).toBe('DENY');
    expect(first.headers.get('referrer-policy')).toBe('no-referrer');
    expect(first.headers.get('cache-control')).toContain('no-store');
    expect(first.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const html = await first.text();
    expect(html).toContain(`<script nonce="${scriptNonce}">`);
    expect(html).not.toMatch(/<script(?![^>]*nonce=)/);
    expect(html).not.toMatch(/(src|href)="https?:/);
    expect(Buffer.byteLength(html)).toBeLessThan(10_000);
  });

  it('escapes a hostile identity in the page', async () => {
    const { nonce } = await challenge('<img src=x onerror=alert(1)>"\'.eth');
    const html = await (await fetch(`${server.url}/verify/${nonce}`)).text();
    expect(html).not.toContain('<img');
    expect(html).toContain('&#60;img src=x onerror=alert(1)&#62;&#34;&#39;.eth');
  });

  it('hands out the exact message to sign, and refuses it for unknown or expired links', async () => {
    const { nonce, message } = await challenge();
    const res = await fetch(`${server.url}/verify/${nonce}/message`);
    expect(res.status).toBe(200);
    await expect(res.json()).resolves.toEqual({ message });

    const unknown = await fetch(`${server.url}/verify/${'a'.repeat(32)}/message`);
    expect(unknown.status).toBe(404);
    await expect(unknown.json()).resolves.toMatchObject({ ok: false, reason: 'unknown_nonce' });

    clock += 10 * 60_000;
    const expired = await fetch(`${server.url}/verify/${nonce}/message`);
    expect(expired.status).toBe(410);
    await expect(expired.json()).resolves.toMatchObject({ ok: false, reason: 'expired' });
  });

  it('verifies a signature against the message it built, once', async () => {
    const { nonce, message } = await challenge();
    const signature = await member.signMessage({ message });
    const res = await post(nonce, { signature });
    expect(res.status).toBe(200);
    await expect(res.json()).resolves.toMatchObject({ ok: true, message: expect.stringContaining('roles') });
    expect(verified).toHaveLength(1);
    expect(verified[0]).toMatchObject({ address: member.address, record: { nonce, userId: USER } });

    const replay = await post(nonce, { message, signature });
    expect(replay.status).toBe(410);
    await expect(replay.json()).resolves.toMatchObject({ ok: false, reason: 'used' });
    expect(verified).toHaveLength(1);
    expect(JSON.stringify(logs)).not.toContain(signature);
    expect(JSON.stringify(logs)).not.toContain(nonce);
  });

  it('refuses a client-supplied message that differs from the server one', async () => {
    const { nonce, message } = await challenge();
    const tampered = message.replace('vitalik.eth', 'someone-else.eth');
    const res = await post(nonce, {
      message: tampered,
      signature: await member.signMessage({ message: tampered }),
    });
    expect(res.status).toBe(422);
    await expect(res.json()).resolves.toMatchObject({ ok: false, reason: 'tampered' });
    expect(verified).toEqual([]);
    expect((await store.getNonce(nonce))?.usedAt).toBeNull();
  });

  it("a challenge replaced by the account's 6th answers like an unknown link, and the others still work", async () => {
    const made = [];
    for (let i = 0; i < 6; i += 1) {
      made.push(await challenge());
      clock += 1_000;
    }
    const [replaced, kept] = [made[0]?.nonce ?? '', made[1]?.nonce ?? ''];
    const withoutCspNonce = async (res: Response) =>
      [res.status, (await res.text()).replaceAll(/nonce="[^"]+"/g, '')] as const;
    const unknownPage = await withoutCspNonce(await fetch(`${server.url}/verify/${'a'.repeat(32)}`));
    expect(await withoutCspNonce(await fetch(`${server.url}/verify/${replaced}`))).toEqual(unknownPage);
    const keptPage = await withoutCspNonce(await fetch(`${server.url}/verify/${kept}`));
    expect(keptPage).not.toEqual(unknownPage);

    const message = await fetch(`${server.url}/verify/${replaced}/message`);
    expect(message.status).toBe(404);
    await expect(message.json()).resolves.toMatchObject({ ok: false, reason: 'unknown_nonce' });
    const signed = await post(replaced, {
      signature: await member.signMessage({ message: made[0]?.message ?? '' }),
    });
    expect(signed.status).toBe(404);
    await expect(signed.json()).resolves.toMatchObject({ ok: false, reason: 'unknown_nonce' });
    expect(verified).toEqual([]);

    const last = made[5];
    if (!last) throw new Error('no sixth challenge');
    const ok = await post(last.nonce, { signature: await member.signMessage({ message: last.message }) });
    expect(ok.status).toBe(200);
    expect(verified).toHaveLength(1);
  });

  it('refuses an expired link', async () => {
    const { nonce, message } = await challenge();
    clock += 10 * 60_000 + 1;
    const res = await post(nonce, { signature: await member.signMessage({ message }) });
    expect(res.status).toBe(410);
    await expect(res.json()).resolves.toMatchObject({ ok: false, reason: 'expired' });
    expect(verified).toEqual([]);
  });

  it('refuses oversized, non-JSON and malformed bodies', async () => {
    const { nonce } = await challenge();
    const big = await post(nonce, { signature: `0x${'ab'.repeat(5_000)}` });
    expect(big.status).toBe(413);
    expect((await post(nonce, 'signature=0x12', 'application/x-www-form-urlencoded')).status).toBe(415);
    expect((await post(nonce, '{not json')).status).toBe(400);
    expect((await post(nonce, { signature: 42 })).status).toBe(400);
    expect((await post(nonce, [])).status).toBe(400);
    expect((await post(nonce, null)).status).toBe(400);
    expect((await post('nope', { signature: '0x1234' })).status).toBe(404);
    expect(verified).toEqual([]);
  });

  it('rejects other methods with 405 and unknown paths with 404', async () => {
    const { nonce } = await challenge();
    const put = await fetch(`${server.url}/verify/${nonce}`, { method: 'PUT' });
    expect(put.status).toBe(405);
    expect(put.headers.get('allow')).toBe('GET, HEAD, POST');
    const del = await fetch(`${server.url}/healthz`, { method: 'DELETE' });
    expect(del.status).toBe(405);
    const postMessage = await fetch(`${server.url}/verify/${nonce}/message`, { method: 'POST' });
    expect(postMessage.status).toBe(405);
    expect((await fetch(`${server.url}/`)).status).toBe(404);
    expect((await fetch(`${server.url}/verify/${nonce}/x/y`)).status).toBe(404);
  });

  it('answers 500 without details when onVerified fails, and logs no full signature', async () => {
    failVerified = true;
    const { nonce, message } = await challenge();
    const signature = await member.signMessage({ message });
    const res = await post(nonce, { signature });
    expect(res.status).toBe(500);
    const body = (await res.json()) as { ok: boolean; message: string };
    expect(body.ok).toBe(false);
    expect(body.message).toContain('/verify');
    expect(body.message).not.toContain('database');
    const logged = JSON.stringify(logs);
    expect(logged).toContain('database is down');
    expect(logged).not.toContain(signature);
  });

  it('burns a challenge after 10 refused signatures; the right signature then finds it used', async () => {
    const { nonce, message } = await challenge();
    const stranger = privateKeyToAccount(generatePrivateKey());
    const forged = await stranger.signMessage({ message });
    const statuses: number[] = [];
    for (let i = 0; i < 10; i += 1) statuses.push((await post(nonce, { message, signature: forged })).status);
    expect(statuses.slice(0, 9)).toEqual(Array(9).fill(422));
    expect(statuses[9]).toBe(410);
    expect((await store.getNonce(nonce))?.failedAttempts).toBe(10);
    const honest = await post(nonce, { message, signature: await member.signMessage({ message }) });
    expect(honest.status).toBe(410);
    await expect(honest.json()).resolves.toMatchObject({ ok: false, reason: 'used' });
    expect(verified).toEqual([]);
  });

  it('turns a flooding client away before any signature work, across challenges', async () => {
    await server.close();
    server = await startWebServer({
      port: 0,
      host: '127.0.0.1',
      store,
      siwe,
      limits: { refusedSignaturesPerClient: 3 },
      onVerified: async (result) => {
        verified.push(result);
        return linkOutcome;
      },
    });
    const stranger = privateKeyToAccount(generatePrivateKey());
    for (let i = 0; i < 3; i += 1) {
      const { nonce, message } = await challenge();
      const res = await post(nonce, { message, signature: await stranger.signMessage({ message }) });
      expect(res.status).toBe(422);
    }
    const { nonce, message } = await challenge();
    const blocked = await post(nonce, { message, signature: await member.signMessage({ message }) });
    expect(blocked.status).toBe(429);
    await expect(blocked.json()).resolves.toMatchObject({ reason: 'too_many_attempts' });
    expect((await store.getNonce(nonce))?.usedAt).toBeNull();
    expect(verified).toEqual([]);
  });

  it('a valid signature whose link the service refuses (the link cap) answers 409 with the reason', async () => {
    linkOutcome = { ok: false, refusal: { code: 'too_many_links', count: 5, max: 5 } };
    const { nonce, message } = await challenge();
    const res = await post(nonce, { message, signature: await member.signMessage({ message }) });
    expect(res.status).toBe(409);
    await expect(res.json()).resolves.toMatchObject({ ok: false, reason: 'too_many_links' });
  });
});
