/**
 * The signing page's script and its words: the script is plain browser JavaScript; what it says comes
 * from the catalog, rendered on the server into a JSON block the script reads.
 */
import { t } from '../../i18n/index.ts';

// Plain browser JavaScript; every user-visible string goes through textContent, never innerHTML.
// EVM wallets are found through EIP-6963 (window.ethereum when none announces itself), Solana wallets
// through the Wallet Standard; with several, the member picks one.
const SCRIPT_SOURCE = `
(function () {
  var root = document.getElementById('verify');
  var button = document.getElementById('sign');
  var status = document.getElementById('status');
  var picker = document.getElementById('wallets');
  var nonce = root.dataset.nonce;
  var family = root.dataset.family;
  var expected = root.dataset.address;
  var words = JSON.parse(document.getElementById('words').textContent);
  var expiry = document.getElementById('expiry');
  if (expiry) expiry.textContent = new Date(expiry.getAttribute('datetime')).toLocaleString(document.documentElement.lang);
  function fill(text, name, value) { return text.split('{' + name + '}').join(value); }
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
    // A broken wallet must not break the page.
    try { event.detail(api); } catch (error) {}
  });
  window.dispatchEvent(new CustomEvent('wallet-standard:app-ready', { detail: api }));
  function evmWallets() {
    if (announced.length) return announced.map(function (a) { return { name: a.info.name, provider: a.provider }; });
    var injected = window.ethereum;
    return injected && typeof injected.request === 'function' ? [{ name: words.browserWallet, provider: injected }] : [];
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
    say(words.chooseWallet);
    picker.textContent = '';
    return new Promise(function (resolve) {
      list.forEach(function (item) {
        var choice = document.createElement('button');
        choice.type = 'button';
        choice.className = 'wallet';
        choice.textContent = String(item.name || words.walletName).slice(0, 60);
        choice.addEventListener('click', function () { picker.hidden = true; resolve(item); });
        picker.appendChild(choice);
      });
      picker.hidden = false;
    });
  }
  async function challengeMessage() {
    var got = await fetch(nonce + '/message', { headers: { accept: 'application/json' }, cache: 'no-store' });
    var body = await got.json();
    if (!got.ok) { say(body.message || words.linkUnusable, 'error'); return null; }
    return body;
  }
  function wrongAccount(shared) {
    say(fill(words.wrongAccount, 'shared', shared || words.noAccount), 'error');
    return null;
  }
  async function signEvm(provider) {
    say(words.waitingAccount);
    var accounts = await provider.request({ method: 'eth_requestAccounts' });
    var account = (accounts || []).find(function (a) { return String(a).toLowerCase() === expected.toLowerCase(); });
    if (!account) return wrongAccount(accounts && accounts[0]);
    var body = await challengeMessage();
    if (!body) return null;
    say(words.checkWallet);
    var hex = toHex(new TextEncoder().encode(body.message));
    return { signature: await provider.request({ method: 'personal_sign', params: [hex, account] }) };
  }
  async function signSolana(wallet) {
    say(words.waitingAccount);
    var connected = await wallet.features['standard:connect'].connect();
    var accounts = (connected && connected.accounts) || wallet.accounts || [];
    var account = accounts.find(function (a) { return a.address === expected; });
    if (!account) return wrongAccount(accounts[0] && accounts[0].address);
    var body = await challengeMessage();
    if (!body) return null;
    say(words.checkWallet);
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
      say(solana ? words.noWalletSolana : words.noWalletEvm, 'error');
      return;
    }
    button.disabled = true;
    var done = false;
    try {
      var chosen = await choose(found);
      var payload = solana ? await signSolana(chosen.wallet) : await signEvm(chosen.provider);
      if (!payload) return;
      say(words.checking);
      var sent = await fetch(nonce, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(payload),
      });
      var result = await sent.json();
      if (result.ok) {
        done = true;
        button.hidden = true;
        say(result.message || words.verified, 'success');
        // The Linked Roles page answers with the page that shows what was written.
        if (typeof result.next === 'string') window.location.assign(result.next);
      } else {
        say(result.message || words.refused, 'error');
      }
    } catch (error) {
      if (error && error.code === 4001) say(words.cancelled, 'error');
      else say(fill(words.failed, 'error', error && error.message ? error.message : words.unknownError), 'error');
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

// Sent on every signing page: whole-line comments and indentation stripped (a fifth of the page's
// bytes), so the page in any language fits one round trip.
const SCRIPT = SCRIPT_SOURCE.replace(/\n\s*\/\/[^\n]*/g, '').replace(/\n\s+/g, '\n');

const SCRIPT_WORDS = {
  chooseWallet: 'web.script.chooseWallet',
  walletName: 'web.script.walletName',
  browserWallet: 'web.script.browserWallet',
  linkUnusable: 'web.script.linkUnusable',
  wrongAccount: 'web.script.wrongAccount',
  noAccount: 'web.script.noAccount',
  waitingAccount: 'web.script.waitingAccount',
  checkWallet: 'web.script.checkWallet',
  noWalletSolana: 'web.script.noWalletSolana',
  noWalletEvm: 'web.script.noWalletEvm',
  checking: 'web.script.checking',
  verified: 'web.script.verified',
  refused: 'web.script.refused',
  cancelled: 'web.script.cancelled',
  failed: 'web.script.failed',
  unknownError: 'web.script.unknownError',
} as const;

/**
 * The script's words in `locale`: `{address}` filled in here, `{shared}` and `{error}` kept for the
 * script to fill (it writes them with textContent).
 */
export function scriptWords(locale: string, address: string): Record<keyof typeof SCRIPT_WORDS, string> {
  const values = { address, shared: '{shared}', error: '{error}' };
  const words = {} as Record<keyof typeof SCRIPT_WORDS, string>;
  for (const [name, key] of Object.entries(SCRIPT_WORDS))
    words[name as keyof typeof SCRIPT_WORDS] = t(locale, key, values);
  return words;
}

/** JSON that cannot end its `<script>` element or start a comment or tag in it. */
function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** The words block and the script, both allowed by the response's CSP nonce (escaped already). */
export function signingScript(locale: string, address: string, nonceAttr: string): string {
  return `<script type="application/json" id="words" nonce="${nonceAttr}">${scriptJson(scriptWords(locale, address))}</script>
<script nonce="${nonceAttr}">${SCRIPT}</script>
`;
}
