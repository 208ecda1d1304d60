import { describe, expect, it } from 'vitest';
import type { UncountedCredential } from '../../src/gating/rules/credentialSubjects.ts';
import { renderLinkedRolePage } from '../../src/web/pages/linkedRolePage.ts';

const WALLET = '0xcd133d337ead9c2ac799ec7524a1e0f8aa30c3b1';

function uncounted(over: Partial<UncountedCredential> = {}): UncountedCredential {
  return {
    category: 'isHuman',
    label: 'Galxe KYC Verified',
    source: 'galxe-passport',
    subject: WALLET,
    subjectKind: 'address',
    reason: 'address_not_proven',
    lookedUp: 'sub.alice.eth',
    signWith: WALLET,
    ...over,
  };
}

/** The forms of a page, each as the fields it posts and where. */
function forms(html: string): { action: string; fields: Record<string, string> }[] {
  return [...html.matchAll(/<form method="post" action="([^"]*)">([\s\S]*?)<\/form>/g)].map(
    ([, action, body]) => ({
      action: action ?? '',
      fields: Object.fromEntries(
        [...(body ?? '').matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map(
          ([, n, v]) => [n, v],
        ),
      ),
    }),
  );
}

const connected = (list?: UncountedCredential[]) =>
  renderLinkedRolePage(
    {
      kind: 'connected',
      identity: 'sub.alice.eth',
      proof: 'record',
      metadata: { likely_human: '0' },
      ...(list ? { uncounted: list } : {}),
    },
    'nonce',
  );

describe('the Linked Roles page: credentials that do not count', () => {
  it('connected: says why, and each wallet gets one form posting identity=<address>&proof=signature to prove', () => {
    const html = connected([
      uncounted(),
      uncounted({ label: 'Passport Humanity Verified' }),
      uncounted({
        subject: 'alice.eth',
        subjectKind: 'identity',
        reason: 'identity_not_proven',
        signWith: null,
      }),
    ]);
    expect(html).toContain('These credentials do not count toward the values above');
    expect(html).toContain('Galxe KYC Verified, Passport Humanity Verified: from the wallet <code');
    expect(html).toContain('0xcd13…c3b1');
    expect(html).toContain('from <strong>alice.eth</strong>, which you have not proven');
    expect(forms(html)).toEqual([{ action: 'prove', fields: { identity: WALLET, proof: 'signature' } }]);
  });

  it('prove: the current connection’s list, beside the usual form', () => {
    const html = renderLinkedRolePage(
      {
        kind: 'prove',
        username: 'alice',
        current: { identity: 'sub.alice.eth', stale: false, uncounted: [uncounted()] },
      },
      'nonce',
    );
    expect(html).toContain('In your connection now, these credentials do not count');
    expect(forms(html)).toContainEqual({ action: 'prove', fields: { identity: WALLET, proof: 'signature' } });
    expect(forms(html)).toHaveLength(2);
  });

  it('nothing passed, or an empty list: the page is as before', () => {
    expect(connected([])).toBe(connected());
    expect(connected()).not.toContain('do not count');
    expect(forms(connected())).toEqual([]);
  });

  it('escapes hostile labels and subjects', () => {
    const html = connected([
      uncounted({ label: '<script>alert(1)</script>', subject: '"><img src=x>', signWith: '"><b>' }),
    ]);
    expect(html).not.toContain('<script>alert');
    expect(html).not.toContain('<img');
    expect(html).not.toContain('"><b>');
  });
});
