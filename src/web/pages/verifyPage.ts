/**
 * The wallet-signature page: one small self-contained HTML document (inline style and script, both
 * allowed by a per-response CSP nonce), readable without JavaScript.
 */
import { accountName, isSolanaChallenge, serverName } from '../../gating/proofs/challengeMessage.ts';
import type { NonceRecord } from '../../gating/proofs/siwe.ts';

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
  | { kind: 'wrong_account'; expected: string; actual: string }
  | { kind: 'sign_in_failed'; reason: SignInFailure; retryUrl: string | null };

const STYLE = `
:root{color-scheme:light;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1a1a1a;background:#f6f7f9}
body{margin:0;padding:1rem}
main{max-width:34rem;margin:2rem auto;padding:1.5rem;background:#fff;border:1px solid #d0d4da;border-radius:.75rem}
h1{font-size:1.4rem;margin:0 0 .75rem}
dl{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem;margin:1rem 0}
dt{font-weight:600}dd{margin:0;overflow-wrap:anywhere}
code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.95em}
.safe{padding:.75rem 1rem;background:#eef4ff;border-left:4px solid #1d4ed8}
button{font:inherit;font-weight:600;padding:.7rem 1.2rem;color:#fff;background:#1d4ed8;border:0;border-radius:.5rem;cursor:pointer}
button:hover{background:#1e40af}button:disabled{background:#5b6472;cursor:wait}
button:focus-visible{outline:3px solid #111;outline-offset:3px}
.wallet{margin:.5rem .5rem 0 0;background:#374151}
#status{min-height:1.5em;margin-top:1rem}
.error{color:#b91c1c}.success{color:#166534;font-weight:600}
.warn{padding:.75rem 1rem;background:#fff7e6;border-left:4px solid #b45309}
.secondary{background:#374151}.secondary:hover{background:#1f2937}
label{display:block;font-weight:600;margin:.5rem 0}
input{font:inherit;width:100%;box-sizing:border-box;padding:.5rem;margin-top:.25rem;border:1px solid #9aa3af;border-radius:.4rem}
.choices{display:flex;flex-wrap:wrap;gap:.5rem;margin:.75rem 0}
`;

// Plain browser JavaScript; every user-visible string goes through textContent, never innerHTML.
// EVM wallets are found through EIP-6963 (window.ethereum when none announces itself), Solana wallets
// through the Wallet Standard; with several, the member picks one.
const SCRIPT = `
(function () {
  var root = document.getElementById('verify');
  var button = document.getElementById('sign');
  var status = document.getElementById('status');
  var picker = document.getElementById('wallets');
  var nonce = root.dataset.nonce;
  var family = root.dataset.family;
  var expected = root.dataset.address;
  var expiry = document.getElementById('expiry');
  if (expiry) expiry.textContent = new Date(expiry.getAttribute('datetime')).toLocaleString();
  function say(text, tone) { status.textContent = text; status.className = tone || ''; }
  function toHex(bytes) {
    var out = '0x';
    for (var i = 0; i < bytes.length; i++) out += bytes[i].toString(16).padStart(2, '0');
    return out;
  }
  var announced = [];
  window.addEventListener('eip6963:announceProvider', function (event) {
    var d = event.detail;
    if (!d || !d.info || !d.provider || typeof d.provider.request !== 'function') return;
    if (announced.some(function (a) { return a.info.uuid === d.info.uuid; })) return;
    announced.push(d);
  });
  window.dispatchEvent(new Event('eip6963:requestProvider'));
  var standard = [];
  var api = Object.freeze({ register: function () {
    for (var i = 0; i < arguments.length; i++) if (standard.indexOf(arguments[i]) === -1) standard.push(arguments[i]);
    return function () {};
  } });
  window.addEventListener('wallet-standard:register-wallet', function (event) {
    try { event.detail(api); } catch (error) { /* a broken wallet must not break the page */ }
  });
  window.dispatchEvent(new CustomEvent('wallet-standard:app-ready', { detail: api }));
  function evmWallets() {
    if (announced.length) return announced.map(function (a) { return { name: a.info.name, provider: a.provider }; });
    var injected = window.ethereum;
    return injected && typeof injected.request === 'function' ? [{ name: 'Browser wallet', provider: injected }] : [];
  }
  function solanaWallets() {
    return standard.filter(function (w) {
      var f = (w && w.features) || {};
      var onSolana = (w.chains || []).some(function (c) { return String(c).indexOf('solana:') === 0; });
      return onSolana && f['standard:connect'] && (f['solana:signMessage'] || f['solana:signIn']);
    }).map(function (w) { return { name: w.name, wallet: w }; });
  }
  function choose(list) {
    if (list.length === 1) return Promise.resolve(list[0]);
    say('Several wallets are installed. Choose the one that holds ' + expected + '.');
    picker.textContent = '';
    return new Promise(function (resolve) {
      list.forEach(function (item) {
        var choice = document.createElement('button');
        choice.type = 'button';
        choice.className = 'wallet';
        choice.textContent = String(item.name || 'Wallet').slice(0, 60);
        choice.addEventListener('click', function () { picker.hidden = true; resolve(item); });
        picker.appendChild(choice);
      });
      picker.hidden = false;
    });
  }
  async function challengeMessage() {
    var got = await fetch(nonce + '/message', { headers: { accept: 'application/json' }, cache: 'no-store' });
    var body = await got.json();
    if (!got.ok) { say(body.message || 'This link can no longer be used.', 'error'); return null; }
    return body;
  }
  function wrongAccount(shared) {
    say('Your wallet shared ' + (shared || 'no account') + ', but this link is for ' + expected + '. Switch to that account in your wallet, then press the button again.', 'error');
    return null;
  }
  async function signEvm(provider) {
    say('Waiting for your wallet to share an account...');
    var accounts = await provider.request({ method: 'eth_requestAccounts' });
    var account = (accounts || []).find(function (a) { return String(a).toLowerCase() === expected.toLowerCase(); });
    if (!account) return wrongAccount(accounts && accounts[0]);
    var body = await challengeMessage();
    if (!body) return null;
    say('Check your wallet and sign the message. It is not a transaction and costs nothing.');
    var hex = toHex(new TextEncoder().encode(body.message));
    return { signature: await provider.request({ method: 'personal_sign', params: [hex, account] }) };
  }
  async function signSolana(wallet) {
    say('Waiting for your wallet to share an account...');
    var connected = await wallet.features['standard:connect'].connect();
    var accounts = (connected && connected.accounts) || wallet.accounts || [];
    var account = accounts.find(function (a) { return a.address === expected; });
    if (!account) return wrongAccount(accounts[0] && accounts[0].address);
    var body = await challengeMessage();
    if (!body) return null;
    say('Check your wallet and sign the message. It is not a transaction and costs nothing.');
    var signMessage = wallet.features['solana:signMessage'];
    if (signMessage) {
      var signed = await signMessage.signMessage({ account: account, message: new TextEncoder().encode(body.message) });
      return { signature: toHex(signed[0].signature) };
    }
    var signedIn = await wallet.features['solana:signIn'].signIn(body.signIn);
    return { signature: toHex(signedIn[0].signature), message: new TextDecoder().decode(signedIn[0].signedMessage) };
  }
  async function run() {
    var solana = family === 'solana';
    var found = solana ? solanaWallets() : evmWallets();
    if (!found.length) {
      say('No ' + (solana ? 'Solana' : 'browser') + ' wallet was found. Open this link in a browser with a wallet extension, or in your wallet app\\'s browser.', 'error');
      return;
    }
    button.disabled = true;
    var done = false;
    try {
      var chosen = await choose(found);
      var payload = solana ? await signSolana(chosen.wallet) : await signEvm(chosen.provider);
      if (!payload) return;
      say('Checking your signature...');
      var sent = await fetch(nonce, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(payload),
      });
      var result = await sent.json();
      if (result.ok) {
        done = true;
        button.hidden = true;
        say(result.message || 'Verified.', 'success');
        // The Linked Roles page answers with the page that shows what was written.
        if (typeof result.next === 'string') window.location.assign(result.next);
      } else {
        say(result.message || 'The signature was refused.', 'error');
      }
    } catch (error) {
      if (error && error.code === 4001) say('You cancelled in your wallet. Nothing was signed.', 'error');
      else say('Something went wrong: ' + (error && error.message ? error.message : 'unknown error') + '. Try again.', 'error');
    } finally {
      if (!done) button.disabled = false;
    }
  }
  // The note stays visible when scripts are off or blocked, which <noscript> alone would not cover.
  document.getElementById('needs-js').hidden = true;
  button.hidden = false;
  button.addEventListener('click', run);
})();
`;

const SAFETY_NOTE =
  'Signing only proves you own this wallet. This page never asks for a transaction, a payment or your ' +
  'seed phrase (recovery phrase). Never type your seed phrase anywhere.';

/** The whole verification page for one state; `cspNonce` must match the response's CSP nonce. */
export function renderVerifyPage(state: VerifyPageState, cspNonce: string): string {
  switch (state.kind) {
    case 'ready':
      return htmlDocument('Link your wallet to Discord', cspNonce, readyBody(state.record), {
        nonce: state.record.nonce,
        address: state.record.address,
        family: isSolanaChallenge(state.record) ? 'solana' : 'evm',
      });
    case 'used':
      return htmlDocument(
        'This link was already used',
        cspNonce,
        '<p>Each link works once. If your roles did not update, run <code>/verify</code> in Discord to get a new link.</p>',
      );
    case 'expired':
      return htmlDocument(
        'This link has expired',
        cspNonce,
        '<p>Links work once and only for 10 minutes. Go back to Discord and run <code>/verify</code> to get a new one.</p>',
      );
    case 'wrong_account':
      return htmlDocument(
        'This link belongs to someone else',
        cspNonce,
        `<p>This signing link was made for the Discord account <strong>${escapeHtml(state.expected)}</strong>, but you signed in to Discord as <strong>${escapeHtml(state.actual)}</strong>. Only ${escapeHtml(state.expected)} can use it.</p>
<p class="safe">If someone sent you this link, do not sign anything for them: signing would give them your identity and its roles. To verify yourself, run <code>/verify</code> in Discord and open your own link.</p>`,
      );
    case 'sign_in_failed':
      return htmlDocument(
        SIGN_IN_TITLES[state.reason],
        cspNonce,
        signInFailedBody(state.reason, state.retryUrl),
      );
  }
}

const SIGN_IN_TITLES: Record<SignInFailure, string> = {
  denied: 'Discord sign-in cancelled',
  failed: 'Discord sign-in failed',
  bad_state: 'This sign-in has expired or was already used',
  other_browser: 'This sign-in started in another browser',
  too_many: 'Too many sign-ins',
};

const SIGN_IN_TEXT: Record<SignInFailure, string> = {
  denied:
    'You cancelled the Discord sign-in. The signing page needs it to check that the link is yours; nothing was signed or shared.',
  failed: 'Discord did not confirm who you are. Nothing was signed. Try again in a moment.',
  bad_state:
    'Each sign-in works once and only while its link is valid. Open your signing link again, or run <code>/verify</code> in Discord for a new one.',
  other_browser:
    'The Discord sign-in finished in a different browser than the one that started it, so it was not accepted. Open your signing link in this browser and sign in again.',
  too_many:
    'Too many Discord sign-ins were started from this address. Wait a few minutes, then open your link again.',
};

function signInFailedBody(reason: SignInFailure, retryUrl: string | null): string {
  const retry =
    retryUrl !== null && /^https?:\/\//.test(retryUrl)
      ? `\n<p><a href="${escapeHtml(retryUrl)}">Try again</a></p>`
      : '';
  return `<p>${SIGN_IN_TEXT[reason]}</p>${retry}`;
}

function readyBody(record: NonceRecord): string {
  const expires = new Date(record.expiresAt).toISOString();
  return `<dl>
<dt>Discord account</dt><dd><strong>${escapeHtml(accountName(record))}</strong></dd>
<dt>Discord server</dt><dd><strong>${escapeHtml(serverName(record))}</strong></dd>
<dt>Identity</dt><dd>${escapeHtml(record.identity)}</dd>
<dt>Wallet address</dt><dd><code>${escapeHtml(record.address)}</code></dd>
</dl>
<p class="safe">${SAFETY_NOTE}</p>
<p>This link works once and expires at <time id="expiry" datetime="${expires}">${expires.replace('T', ' ').slice(0, 16)} UTC</time>.</p>
<p id="needs-js" class="error">This page needs JavaScript and a browser wallet to sign. Turn JavaScript on, or open this link in your wallet app's browser.</p>
<button type="button" id="sign" hidden>Connect wallet and sign</button>
<div id="wallets" hidden></div>
<p id="status" role="status" aria-live="polite"></p>`;
}

/**
 * One page of the bot's site (the signing page's look, shared with the Linked Roles page); with
 * `signing` data it carries the signing script, which reads the data from `<main>`. `body` must be
 * escaped already.
 */
export function htmlDocument(
  title: string,
  cspNonce: string,
  body: string,
  signing?: { nonce: string; address: string; family: 'evm' | 'solana' },
): string {
  const nonceAttr = escapeHtml(cspNonce);
  const data = signing
    ? ` data-nonce="${escapeHtml(signing.nonce)}" data-address="${escapeHtml(signing.address)}" data-family="${signing.family}"`
    : '';
  const script = signing ? `<script nonce="${nonceAttr}">${SCRIPT}</script>\n` : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<style nonce="${nonceAttr}">${STYLE}</style>
</head>
<body>
<main id="verify"${data}>
<h1>${escapeHtml(title)}</h1>
${body}
</main>
${script}</body>
</html>
`;
}

/** Escapes text for HTML element content and double-quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
