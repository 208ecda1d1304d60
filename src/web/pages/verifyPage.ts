/**
 * The wallet-signature page: one small self-contained HTML document (inline style and script, both
 * allowed by a per-response CSP nonce), readable without JavaScript, in the member's language.
 */
import { accountName, isSolanaChallenge, serverName } from '../../gating/proofs/challengeMessage.ts';
import type { NonceRecord } from '../../gating/proofs/siwe.ts';
import { DEFAULT_LOCALE, type MessageKey, t } from '../../i18n/index.ts';
import { htmlDocument } from './document.ts';
import { escapeHtml, rich, text } from './words.ts';

export { escapeHtml, htmlDocument };

/** Why the Discord sign-in in front of the signing page did not let the browser through. */
export type SignInFailure =
  /** The member pressed Cancel on Discord's page. */
  | 'denied'
  /** Discord refused the code, did not answer, or answered nonsense. */
  | 'failed'
  /** The state is unknown, used (a replayed callback) or expired. */
  | 'bad_state'
  /** The callback arrived in a browser that did not start this sign-in (a forwarded callback URL). */
  | 'other_browser'
  /** This client started too many sign-ins lately. */
  | 'too_many';

export type VerifyPageState =
  | { kind: 'ready'; record: NonceRecord }
  | { kind: 'expired' }
  | { kind: 'used' }
  /** Signed in to Discord as another account than the one the link was made for. */
  | { kind: 'wrong_account'; expected: string; actual: string; farcaster?: boolean }
  | { kind: 'sign_in_failed'; reason: SignInFailure; retryUrl: string | null };

/** How long a signing link lasts, as the pages say it. */
const LINK_MINUTES = 10;

/** The whole verification page for one state; `cspNonce` must match the response's CSP nonce. */
export function renderVerifyPage(
  state: VerifyPageState,
  cspNonce: string,
  locale: string = DEFAULT_LOCALE,
): string {
  const page = (titleKey: MessageKey, body: string) =>
    htmlDocument(locale, t(locale, titleKey), cspNonce, body);
  switch (state.kind) {
    case 'ready':
      return htmlDocument(
        locale,
        t(locale, 'web.verify.title.ready'),
        cspNonce,
        readyBody(state.record, locale),
        {
          nonce: state.record.nonce,
          address: state.record.address,
          family: isSolanaChallenge(state.record) ? 'solana' : 'evm',
        },
      );
    case 'used':
      return page('web.verify.title.used', `<p>${rich(locale, 'web.verify.usedHtml')}</p>`);
    case 'expired':
      return page(
        'web.verify.title.expired',
        `<p>${rich(locale, 'web.verify.expiredHtml', { minutes: LINK_MINUTES })}</p>`,
      );
    case 'wrong_account':
      return page(
        'web.verify.title.wrongAccount',
        state.farcaster
          ? `<p>${rich(locale, 'web.farcaster.wrongAccountHtml', { expected: state.expected, actual: state.actual })}</p>
<p class="safe">${rich(locale, 'web.farcaster.wrongAccountSafeHtml')}</p>`
          : `<p>${rich(locale, 'web.verify.wrongAccountHtml', { expected: state.expected, actual: state.actual })}</p>
<p class="safe">${rich(locale, 'web.verify.wrongAccountSafeHtml')}</p>`,
      );
    case 'sign_in_failed':
      return page(SIGN_IN_TITLES[state.reason], signInFailedBody(state.reason, state.retryUrl, locale));
  }
}

const SIGN_IN_TITLES: Record<SignInFailure, MessageKey> = {
  denied: 'web.signIn.title.denied',
  failed: 'web.signIn.title.failed',
  bad_state: 'web.signIn.title.badState',
  other_browser: 'web.signIn.title.otherBrowser',
  too_many: 'web.signIn.title.tooMany',
};

function signInText(reason: SignInFailure, locale: string): string {
  switch (reason) {
    case 'denied':
      return text(locale, 'web.signIn.denied');
    case 'failed':
      return text(locale, 'web.signIn.failed');
    case 'bad_state':
      return rich(locale, 'web.signIn.badStateHtml');
    case 'other_browser':
      return text(locale, 'web.signIn.otherBrowser');
    case 'too_many':
      return text(locale, 'web.signIn.tooMany');
  }
}

function signInFailedBody(reason: SignInFailure, retryUrl: string | null, locale: string): string {
  const retry =
    retryUrl !== null && /^https?:\/\//.test(retryUrl)
      ? `\n<p><a href="${escapeHtml(retryUrl)}">${text(locale, 'web.signIn.tryAgain')}</a></p>`
      : '';
  return `<p>${signInText(reason, locale)}</p>${retry}`;
}

function readyBody(record: NonceRecord, locale: string): string {
  const expires = new Date(record.expiresAt).toISOString();
  const time = `<time id="expiry" datetime="${expires}">${expires.replace('T', ' ').slice(0, 16)} UTC</time>`;
  return `<dl>
<dt>${text(locale, 'web.verify.label.account')}</dt><dd><strong>${escapeHtml(accountName(record))}</strong></dd>
<dt>${text(locale, 'web.verify.label.server')}</dt><dd><strong>${escapeHtml(serverName(record))}</strong></dd>
<dt>${text(locale, 'web.verify.label.identity')}</dt><dd>${escapeHtml(record.identity)}</dd>
<dt>${text(locale, 'web.verify.label.address')}</dt><dd><code>${escapeHtml(record.address)}</code></dd>
</dl>
<p class="safe">${text(locale, 'web.verify.safety')}</p>
<p>${rich(locale, 'web.verify.expiresHtml', {}, { time })}</p>
<p id="needs-js" class="error">${text(locale, 'web.verify.needsJs')}</p>
<button type="button" id="sign" hidden>${text(locale, 'web.verify.sign')}</button>
<div id="wallets" hidden></div>
<p id="status" role="status" aria-live="polite"></p>`;
}
