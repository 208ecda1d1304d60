/**
 * The owners' dashboard's page shell: landmarks (a header with the site and server navigation, one main),
 * a skip link, the page's language, and the style, all inline under the page's CSP nonce; no script. The
 * navigation marks the current page; every form posts to this site with the session's CSRF token.
 * `body` must be escaped already. Pure.
 */
import { t } from '../../i18n/index.ts';
import type { Formats } from './dashboardParts.ts';
import { escapeHtml, text } from './words.ts';

const STYLE = `
:root{color-scheme:light;font:16px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1a1a1a;background:#f6f7f9}
body{margin:0}
a{color:#1d4ed8}a:focus-visible,button:focus-visible,input:focus-visible,select:focus-visible,summary:focus-visible{outline:3px solid #111;outline-offset:2px}
.skip{position:absolute;left:-999px;top:0;background:#fff;padding:.5rem 1rem;z-index:1}.skip:focus{left:.5rem}
header{background:#fff;border-bottom:1px solid #d0d4da;padding:.5rem 1rem}
header nav ul{list-style:none;display:flex;flex-wrap:wrap;gap:.25rem 1rem;margin:0;padding:0;align-items:center}
header nav a[aria-current]{font-weight:700;color:#111}
.site{display:flex;flex-wrap:wrap;justify-content:space-between;align-items:center;gap:.5rem}
.account{display:flex;gap:.75rem;align-items:center}
.pages{margin-top:.5rem}
main{max-width:60rem;margin:1rem auto;padding:1rem 1.25rem 2rem;background:#fff;border:1px solid #d0d4da;border-radius:.75rem}
h1{font-size:1.5rem;margin:.25rem 0 1rem}h2{font-size:1.2rem;margin:1.75rem 0 .5rem}h3{font-size:1rem;margin:0}
table{border-collapse:collapse;width:100%;margin:.5rem 0}caption{text-align:left;font-weight:600;padding:.25rem 0}
th,td{text-align:left;padding:.35rem .5rem;border-bottom:1px solid #e3e6ea;vertical-align:top;overflow-wrap:anywhere}
thead th{border-bottom:2px solid #9aa3af}
code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.9em}
dl.counts{display:grid;grid-template-columns:repeat(auto-fit,minmax(11rem,1fr));gap:.75rem;margin:.5rem 0}
dl.counts div{border:1px solid #d0d4da;border-radius:.5rem;padding:.5rem .75rem}
dl.counts dt{font-size:.9rem;color:#374151}dl.counts dd{margin:0;font-size:1.6rem;font-weight:700}
dl.pairs{display:grid;grid-template-columns:max-content 1fr;gap:.25rem 1rem}dl.pairs dt{font-weight:600}dl.pairs dd{margin:0}
.muted{color:#4b5563}.notice{padding:.75rem 1rem;border-left:4px solid #1d4ed8;background:#eef4ff;margin:1rem 0}
.notice.error{border-color:#b91c1c;background:#fef2f2}.notice.success{border-color:#166534;background:#f0fdf4}
.notice.warn{border-color:#b45309;background:#fff7e6}
button,.button{font:inherit;font-weight:600;padding:.45rem .9rem;color:#fff;background:#1d4ed8;border:0;border-radius:.4rem;cursor:pointer;text-decoration:none;display:inline-block}
button.secondary,.button.secondary{background:#374151}button.danger{background:#b91c1c}
form.inline{display:inline}
label{display:block;font-weight:600;margin:.5rem 0 .15rem}
input,select{font:inherit;padding:.4rem;border:1px solid #6b7280;border-radius:.35rem;max-width:100%}
fieldset{border:1px solid #d0d4da;border-radius:.5rem;padding:.5rem 1rem 1rem;margin:1rem 0}legend{font-weight:600;padding:0 .25rem}
.fields{display:flex;flex-wrap:wrap;gap:0 1rem;align-items:flex-end}.fields>div{min-width:10rem}
.actions{display:flex;flex-wrap:wrap;gap:.5rem;margin-top:.75rem}
.servers{list-style:none;padding:0;display:grid;grid-template-columns:repeat(auto-fill,minmax(14rem,1fr));gap:.75rem}
.servers a{display:flex;gap:.75rem;align-items:center;padding:.75rem;border:1px solid #d0d4da;border-radius:.5rem;text-decoration:none;color:#111}
.icon{width:40px;height:40px;border-radius:50%;background:#374151;color:#fff;display:inline-flex;align-items:center;justify-content:center;font-weight:700;flex:none}
img.icon{background:none}
.chart-figure{margin:1rem 0 1.5rem}.chart-figure figcaption p{margin:.1rem 0 .25rem;color:#4b5563;font-size:.9rem}
svg.chart{width:100%;height:auto;display:block}svg.chart .axis text{font-size:11px;fill:#374151}
.legend{list-style:none;display:flex;gap:1rem;padding:0;margin:.25rem 0}.legend li{display:flex;gap:.35rem;align-items:center}
svg.swatch{width:12px;height:12px}
.period{display:flex;gap:1rem;margin:.5rem 0}.period a[aria-current]{font-weight:700;color:#111}
.pager{display:flex;gap:1rem;margin:1rem 0}
`;

/** The server pages, in navigation order: their path below `/dashboard/{guildId}` and title key. */
export const GUILD_PAGES = [
  ['', 'web.dashboard.nav.overview'],
  ['/rules', 'web.dashboard.nav.rules'],
  ['/exemptions', 'web.dashboard.nav.exemptions'],
  ['/held', 'web.dashboard.nav.held'],
  ['/audit', 'web.dashboard.nav.audit'],
  ['/health', 'web.dashboard.nav.health'],
] as const;
export type GuildPage = (typeof GUILD_PAGES)[number][0];

/** What every dashboard page knows: where it is, who is signed in, and their CSRF token. */
export interface DashboardFrame {
  locale: string;
  /** The locale's formats, made once by the caller (dashboardParts.ts). */
  formats: Formats;
  /** The dashboard's root below PUBLIC_URL (`/dashboard`, or below a proxy prefix). */
  root: string;
  account?: { username: string; csrf: string };
  /** On a server's page: the server and which page this is. */
  guild?: { id: string; name: string; page: GuildPage };
}

/** The hidden CSRF field every form carries. */
export function csrfField(frame: DashboardFrame): string {
  return frame.account ? `<input type="hidden" name="csrf" value="${escapeHtml(frame.account.csrf)}">` : '';
}

/** A whole page: `heading` is text; `body` is HTML already escaped. */
export function dashboardDocument(
  frame: DashboardFrame,
  heading: string,
  body: string,
  cspNonce: string,
): string {
  const { locale, root } = frame;
  const nonce = escapeHtml(cspNonce);
  const current = (on: boolean) => (on ? ' aria-current="page"' : '');
  const account = frame.account
    ? `<div class="account"><span>${text(locale, 'web.dashboard.signedInAs', { username: frame.account.username })}</span>` +
      `<form class="inline" method="post" action="${escapeHtml(`${root}/sign-out`)}">${csrfField(frame)}` +
      `<button type="submit" class="secondary">${text(locale, 'web.dashboard.signOut')}</button></form></div>`
    : '';
  const site =
    `<nav aria-label="${text(locale, 'web.dashboard.nav.label')}" class="site"><ul>` +
    `<li><a href="${escapeHtml(root)}"${current(!frame.guild)}>${text(locale, 'web.dashboard.nav.servers')}</a></li></ul>${account}</nav>`;
  const guild = frame.guild;
  const pages = guild
    ? `<nav aria-label="${text(locale, 'web.dashboard.nav.pages', { server: guild.name })}" class="pages"><ul>${GUILD_PAGES.map(
        ([path, key]) =>
          `<li><a href="${escapeHtml(`${root}/${guild.id}${path}`)}"${current(guild.page === path)}>${text(locale, key)}</a></li>`,
      ).join('')}</ul></nav>`
    : '';
  const title = [heading, guild?.name, t(locale, 'web.dashboard.title')].filter(Boolean).join(' · ');
  return `<!doctype html>
<html lang="${escapeHtml(locale)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${escapeHtml(title)}</title>
<style nonce="${nonce}">${STYLE}</style>
</head>
<body>
<a class="skip" href="#main">${text(locale, 'web.dashboard.skip')}</a>
<header>${site}${pages}</header>
<main id="main" tabindex="-1">
<h1>${escapeHtml(heading)}</h1>
${body}
</main>
</body>
</html>
`;
}
