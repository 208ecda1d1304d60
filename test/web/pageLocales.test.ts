import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SiweConfig } from '../../src/gating/proofs/challengeMessage.ts';
import { createChallenge, type NonceRecord } from '../../src/gating/proofs/siwe.ts';
import { type Catalog, registerCatalog } from '../../src/i18n/index.ts';
import webEnUS from '../../src/i18n/locales/web/en-US.json' with { type: 'json' };
import { openSqliteStore } from '../../src/store/sqliteStore.ts';
import type { GatingStore } from '../../src/store/types.ts';
import { renderLinkedRolePage } from '../../src/web/pages/linkedRolePage.ts';
import { renderVerifyPage } from '../../src/web/pages/verifyPage.ts';
import { startWebServer, type WebServer } from '../../src/web/server.ts';

const member = privateKeyToAccount(generatePrivateKey());
const HOSTILE = '<img src=x onerror=alert(1)>"\'.eth';
const ESCAPED = '&#60;img src=x onerror=alert(1)&#62;&#34;&#39;.eth';

let store: GatingStore;
let server: WebServer;
let siwe: SiweConfig;

beforeEach(async () => {
  store = await openSqliteStore(':memory:');
  siwe = { publicUrl: 'https://bot.example.org' };
  server = await startWebServer({
    port: 0,
    host: '127.0.0.1',
    store,
    siwe,
    onVerified: async () => ({ ok: true }),
  });
});
afterEach(async () => {
  await server.close();
  await store.close();
});

async function challenge(identity = 'vitalik.eth'): Promise<NonceRecord> {
  const created = await createChallenge(store, siwe, {
    guildId: '111111111111111111',
    userId: '222222222222222222',
    userName: 'alice',
    guildName: 'Web3 Lounge',
    identity,
    address: member.address,
  });
  const record = await store.getNonce(created.nonce);
  if (!record) throw new Error('not stored');
  return record;
}

/** Every element opened is closed in order (void elements aside): no markup broken by a message. */
function expectBalanced(html: string): void {
  const open: string[] = [];
  const body = html.replace(/<script[\s\S]*?<\/script>/g, '').replace(/<style[\s\S]*?<\/style>/g, '');
  for (const [, closing, name] of body.matchAll(/<(\/?)([a-zA-Z][a-zA-Z0-9]*)[^>]*>/g)) {
    if (['meta', 'input', 'br'].includes(name ?? '')) continue;
    if (!closing) open.push(name ?? '');
    else expect(open.pop()).toBe(name);
  }
  expect(open).toEqual([]);
  expect(body).not.toMatch(/<(?!\/?[a-zA-Z!])/);
}

/** The words block the signing script reads. */
function scriptWords(html: string): Record<string, string> {
  const json = /<script type="application\/json" id="words" nonce="[^"]+">([^<]*)<\/script>/.exec(html)?.[1];
  return JSON.parse(json ?? 'null');
}

describe('the signing page in the browser’s language', () => {
  it.each([
    ['de-DE,de;q=0.9,en;q=0.5', 'de', 'Wallet mit Discord verknüpfen', 'Wallet verbinden und signieren'],
    ['ja,en-US;q=0.8', 'ja', 'ウォレットを Discord にリンク', 'ウォレットを接続して署名'],
    ['nl', 'en-US', 'Link your wallet to Discord', 'Connect wallet and sign'],
  ])('Accept-Language %s → %s', async (header, locale, title, button) => {
    const record = await challenge(HOSTILE);
    const res = await fetch(`${server.url}/verify/${record.nonce}`, {
      headers: { 'accept-language': header },
    });
    expect(res.headers.get('content-language')).toBe(locale);
    const csp = res.headers.get('content-security-policy') ?? '';
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1];
    expect(csp).not.toMatch(/https?:|\*|unsafe/);
    const html = await res.text();
    expect(html).toContain(`<html lang="${locale}">`);
    expect(html).toContain(`<title>${title}</title>`);
    expect(html).toContain(`>${button}</button>`);
    expect(html).toContain(`<script nonce="${nonce}">`);
    expect(html).not.toMatch(/<script(?![^>]*nonce=)/);
    expect(html).not.toContain('<img');
    expect(html).toContain(ESCAPED);
    // One round trip (about 14 KB) in any language; English stays under its old 10 KB budget.
    expect(Buffer.byteLength(html)).toBeLessThan(locale === 'en-US' ? 10_000 : 14_000);
    expect(scriptWords(html).chooseWallet).toContain(member.address.toLowerCase());
    expectBalanced(html);
  });

  it('answers the JSON refusals in the browser’s language', async () => {
    const res = await fetch(`${server.url}/verify/${'a'.repeat(32)}/message`, {
      headers: { 'accept-language': 'de' },
    });
    expect(res.status).toBe(404);
    await expect(res.json()).resolves.toMatchObject({
      reason: 'unknown_nonce',
      message: 'Dieser Link ist ungültig. Führe /verify in Discord aus, um einen neuen zu erhalten.',
    });
  });
});

describe('the Linked Roles prove page', () => {
  const prove = (locale: string) =>
    renderLinkedRolePage(
      {
        kind: 'prove',
        username: '<b>alice</b>',
        problem: 'slow_down',
        waitSeconds: 30,
        identity: HOSTILE,
        current: { identity: HOSTILE, stale: true },
      },
      'nonce',
      locale,
    );

  it('speaks German', () => {
    const html = prove('de');
    expect(html).toContain('<html lang="de">');
    expect(html).toContain('<title>Eine Web3-Identität verbinden</title>');
    expect(html).toContain('Bei Discord angemeldet als <strong>@&#60;b&#62;alice&#60;/b&#62;</strong>');
    expect(html).toContain('versuch es in 30 Sekunden noch einmal');
    expect(html).toContain(ESCAPED);
    expectBalanced(html);
  });

  it('speaks Japanese', () => {
    const html = prove('ja');
    expect(html).toContain('<html lang="ja">');
    expect(html).toContain('<title>Web3 アイデンティティを接続</title>');
    expect(html).toContain('>レコードを確認</button>');
    expect(html).toContain('30 秒後にもう一度お試しください');
    expect(html).not.toContain('<b>alice');
    expectBalanced(html);
  });
});

describe('a pseudo-locale 40% longer', () => {
  const pseudo: Record<string, string> = {};
  for (const [key, message] of Object.entries(webEnUS))
    pseudo[key] = `${message} ${'·'.repeat(Math.ceil(message.length * 0.4))}`;
  registerCatalog('en-XA', pseudo as Catalog);

  it('still renders every page state as valid, escaped HTML', async () => {
    const record = { ...(await challenge(HOSTILE)), userName: '<b>mallory</b>' };
    const pages = [
      renderVerifyPage({ kind: 'ready', record }, 'n', 'en-XA'),
      renderVerifyPage({ kind: 'used' }, 'n', 'en-XA'),
      renderVerifyPage({ kind: 'wrong_account', expected: HOSTILE, actual: '<b>x</b>' }, 'n', 'en-XA'),
      renderVerifyPage(
        { kind: 'sign_in_failed', reason: 'bad_state', retryUrl: 'https://x.example/"><b>' },
        'n',
        'en-XA',
      ),
      renderLinkedRolePage(
        {
          kind: 'connected',
          identity: HOSTILE,
          proof: 'signature',
          metadata: { humanity_score: '<b>', verified_days: '2025-01-01' },
          uncounted: [
            {
              category: 'isHuman',
              label: '<i>KYC</i>',
              source: 's',
              subject: HOSTILE,
              subjectKind: 'identity',
              reason: 'identity_not_proven',
              lookedUp: HOSTILE,
              signWith: null,
            },
          ],
        },
        'n',
        'en-XA',
      ),
      renderLinkedRolePage(
        { kind: 'failed', reason: 'other_account', startUrl: '/linked-role' },
        'n',
        'en-XA',
      ),
    ];
    for (const html of pages) {
      expect(html).toContain('<html lang="en-XA">');
      expect(html).toContain('··');
      expect(html).not.toMatch(/<(img|b|i)>|<img /);
      expectBalanced(html);
    }
    expect(pages[0]).toContain(ESCAPED);
  });
});
