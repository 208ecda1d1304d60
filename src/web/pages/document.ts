/**
 * One page of the bot's site: the look shared by the signing page and the Linked Roles pages, in the
 * page's language (`<html lang>`), with the signing script and its words when the page signs.
 */
import { signingScript } from './signingScript.ts';
import { escapeHtml } from './words.ts';

/**
 * A page that waits on the server (the Farcaster sign-in): asks its status URL every 2 s and reloads
 * when the state the server answers differs from the one it was rendered in. It shows no words of its
 * own; without it the page's "Check now" link does the same.
 */
const WATCH_SCRIPT = `(function () {
var root = document.getElementById('verify');
var url = root.dataset.status;
var shown = root.dataset.state;
function look() {
fetch(url, { headers: { accept: 'application/json' }, cache: 'no-store' })
.then(function (r) { return r.json(); })
.then(function (s) { if (s && typeof s.state === 'string' && s.state !== shown) window.location.reload(); else setTimeout(look, 2000); })
.catch(function () { setTimeout(look, 4000); });
}
setTimeout(look, 2000);
})();`;

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

/** The waiting page's own rules (the approval link as a button, the QR code): only on that page. */
const WATCH_STYLE = `.qr{margin:1rem 0}.qr svg{display:block;width:14rem;height:14rem;background:#fff}
a.button{display:inline-block;font-weight:600;padding:.7rem 1.2rem;color:#fff;background:#6d28d9;border-radius:.5rem;text-decoration:none}
a.button:focus-visible{outline:3px solid #111;outline-offset:3px}
`;

/**
 * The page; with `signing` data it carries the signing script, which reads the data from `<main>` and
 * its words (in `locale`) from a JSON block; with `watch`, the script of a page that reloads itself when
 * its state changes (the Farcaster sign-in). `title` is text; `body` must be escaped already.
 */
export function htmlDocument(
  locale: string,
  title: string,
  cspNonce: string,
  body: string,
  signing?: { nonce: string; address: string; family: 'evm' | 'solana' },
  watch?: { statusUrl: string; state: string },
): string {
  const nonceAttr = escapeHtml(cspNonce);
  const data = signing
    ? ` data-nonce="${escapeHtml(signing.nonce)}" data-address="${escapeHtml(signing.address)}" data-family="${signing.family}"`
    : watch
      ? ` data-status="${escapeHtml(watch.statusUrl)}" data-state="${escapeHtml(watch.state)}"`
      : '';
  const script = signing
    ? signingScript(locale, signing.address, nonceAttr)
    : watch
      ? `<script nonce="${nonceAttr}">${WATCH_SCRIPT}</script>\n`
      : '';
  return `<!doctype html>
<html lang="${escapeHtml(locale)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<style nonce="${nonceAttr}">${STYLE}${watch ? WATCH_STYLE : ''}</style>
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
