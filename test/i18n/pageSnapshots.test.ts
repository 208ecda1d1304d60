/**
 * What the signing page and the Linked Roles prove page read like in each shipped locale (reviewed by
 * eye in the snapshot file): the visible words only, so a change to the page's script or style does not
 * hide a change of wording.
 */
import { describe, expect, it } from 'vitest';
import { SHIPPED_LOCALES } from '../../src/i18n/index.ts';
import { renderLinkedRolePage } from '../../src/web/pages/linkedRolePage.ts';
import { renderVerifyPage } from '../../src/web/pages/verifyPage.ts';

const NONCE = 'bm9uY2Utbm9uY2Utbm9uY2U=';
const RECORD = {
  nonce: '9f4c2b7e1a6d48c3b05e7f21d9a8c634',
  guildId: '1187654321098765432',
  userId: '283746529183746528',
  userName: 'vitalik_fan',
  guildName: 'Web3 Lounge',
  identity: 'vitalik.eth',
  address: '0xd8da6bf26964af9d7eed9e03e53415d37aa96045',
  expiresAt: Date.UTC(2026, 10, 22, 14, 15),
  usedAt: null,
  failedAttempts: 0,
};

/** The page's text as a reader sees it: no tags, no script or style, one line per block. */
function visibleWords(html: string): string {
  return html
    .replace(/<(script|style)\b[^>]*>[\s\S]*?<\/\1>/g, '')
    .replace(/<(br|\/p|\/h1|\/h2|\/li|\/div|\/button|\/label|\/dt|\/dd)\b[^>]*>/g, '\n')
    .replace(/<[^>]+>/g, '')
    .replace(/&#(\d+);/g, (_, code: string) => String.fromCodePoint(Number(code)))
    .replace(/&amp;/g, '&')
    .split('\n')
    .map((line) => line.replace(/\s+/g, ' ').trim())
    .filter(Boolean)
    .join('\n');
}

describe('the web pages in every shipped locale', () => {
  it.each(SHIPPED_LOCALES)('%s', (locale) => {
    const signing = renderVerifyPage({ kind: 'ready', record: RECORD }, NONCE, locale);
    const prove = renderLinkedRolePage({ kind: 'prove', username: 'vitalik_fan' }, NONCE, locale);
    expect(signing).toContain(`lang="${locale}"`);
    // About one round trip of TCP's initial window, as the English page is held to 10 KB.
    expect(Buffer.byteLength(signing)).toBeLessThan(14_000);
    expect(Buffer.byteLength(prove)).toBeLessThan(14_000);
    expect({ signing: visibleWords(signing), prove: visibleWords(prove) }).toMatchSnapshot();
  });
});
