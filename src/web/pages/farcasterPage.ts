/**
 * The Sign in with Farcaster page, for `/verify` and for the Linked Roles page: whose sign-in it is (the
 * Discord account, the server, the identity and its FID) and the warning never to approve a sign-in
 * someone else started; then, by the flow's state, a button that opens the relay channel, the approval
 * link with its QR code (an SVG drawn on the server) while the page waits, why an approval was refused,
 * or what the proof came to. It works without its script: a form starts, "Check now" (or a reload)
 * finishes. Every dynamic value is escaped.
 */
import encodeQR from 'qr';
import { accountName, isLinkedRoleChallenge, serverName } from '../../gating/proofs/challengeMessage.ts';
import type { FlowRefusal } from '../../gating/proofs/farcasterSignIn.ts';
import { DEFAULT_LOCALE, type MessageKey, t } from '../../i18n/index.ts';
import type { FarcasterFlow } from '../../store/types.ts';
import { htmlDocument } from './document.ts';
import { escapeHtml, rich, text } from './words.ts';

/** What a finished /verify flow came to, as the page words it. */
export type FlowDoneOutcome =
  | { kind: 'verified' }
  | { kind: 'queued' }
  /** The registry or the server refused the proof although the approval was valid (a refusal code). */
  | { kind: 'refused'; code: string }
  | { kind: 'failed' };

export interface FarcasterPageInput {
  flow: FarcasterFlow;
  /** The bot's own host, as the member's Farcaster app shows it. */
  domain: string;
  /** The page's own path, its start form's and its status URL's (below PUBLIC_URL). */
  paths: { self: string; start: string; status: string };
  /** The relay did not answer on the last read (or when opening a channel: `relayDownStart`). */
  relayDown?: boolean;
  relayDownStart?: boolean;
  /** This client opened too many channels lately: seconds to wait. */
  slowDownSeconds?: number;
  /** Whether the member may (re)start it. */
  canStart: boolean;
  /** A done /verify flow's outcome. */
  done?: FlowDoneOutcome;
}

const REFUSALS: Record<FlowRefusal, MessageKey> = {
  malformed: 'web.farcaster.refusal.malformed',
  wrong_domain: 'web.farcaster.refusal.wrongDomain',
  wrong_nonce: 'web.farcaster.refusal.wrongNonce',
  wrong_request: 'web.farcaster.refusal.wrongRequest',
  wrong_fid: 'web.farcaster.refusal.wrongFid',
  expired: 'web.farcaster.refusal.expired',
  bad_signature: 'web.farcaster.refusal.badSignature',
  not_authorized: 'web.farcaster.refusal.notAuthorized',
  chain_unavailable: 'web.farcaster.refusal.chainUnavailable',
  channel_gone: 'web.farcaster.refusal.channelGone',
};

/** Why the flow's last approval was refused, from its stored outcome. */
export function refusalOf(flow: Pick<FarcasterFlow, 'state' | 'outcome'>): FlowRefusal | null {
  if (flow.state !== 'refused') return null;
  const reason = (flow.outcome as { reason?: unknown } | null)?.reason;
  return typeof reason === 'string' && reason in REFUSALS ? (reason as FlowRefusal) : 'malformed';
}

/** The refusal's sentence, in `locale`. */
export function refusalSentence(
  reason: FlowRefusal,
  flow: Pick<FarcasterFlow, 'fid'>,
  domain: string,
  locale: string,
) {
  return t(locale, REFUSALS[reason], { fid: flow.fid, domain });
}

/**
 * What the page shows, as one string: its script reloads the page when the status URL answers another
 * (the flow moved on, the relay went down or came back).
 */
export function pageState(
  flow: Pick<FarcasterFlow, 'state' | 'refusals' | 'outcome'>,
  relayDown: boolean,
): string {
  // A flow claimed for its proof whose outcome is not recorded yet is still being linked.
  const state = linking(flow) ? 'approved' : flow.state;
  return `${state}.${flow.refusals}${relayDown ? '.relay-down' : ''}`;
}

/** Approved, or claimed for its proof whose outcome is not known yet: the page waits for it. */
function linking(flow: Pick<FarcasterFlow, 'state' | 'outcome'>): boolean {
  return flow.state === 'approved' || (flow.state === 'done' && flow.outcome === null);
}

/** The whole page; `cspNonce` must match the response's CSP nonce. */
export function renderFarcasterPage(
  input: FarcasterPageInput,
  cspNonce: string,
  locale: string = DEFAULT_LOCALE,
): string {
  const { flow } = input;
  const title = t(locale, titleOf(input));
  const body = `${details(flow, locale)}
${stateBody(input, locale)}`;
  const waits = flow.state === 'open' || linking(flow);
  return htmlDocument(
    locale,
    title,
    cspNonce,
    body,
    undefined,
    waits ? { statusUrl: input.paths.status, state: pageState(flow, input.relayDown === true) } : undefined,
  );
}

function titleOf(input: FarcasterPageInput): MessageKey {
  const { flow } = input;
  if (linking(flow) || (flow.state === 'done' && input.done === undefined))
    return 'web.farcaster.title.approved';
  if (flow.state === 'done')
    return input.done?.kind === 'verified' || input.done?.kind === 'queued'
      ? 'web.farcaster.title.done'
      : 'web.farcaster.title.notLinked';
  if (!input.canStart) return 'web.farcaster.title.burned';
  if (flow.state === 'refused') return 'web.farcaster.title.refused';
  if (flow.state === 'open') return 'web.farcaster.title.waiting';
  return 'web.farcaster.title.start';
}

function details(flow: FarcasterFlow, locale: string): string {
  const expires = new Date(flow.expiresAt).toISOString();
  const time = `<time datetime="${expires}">${expires.replace('T', ' ').slice(0, 16)} UTC</time>`;
  return `<dl>
<dt>${text(locale, 'web.verify.label.account')}</dt><dd><strong>${escapeHtml(accountName(flow))}</strong></dd>
<dt>${text(locale, 'web.verify.label.server')}</dt><dd><strong>${escapeHtml(serverName(flow))}</strong></dd>
<dt>${text(locale, 'web.verify.label.identity')}</dt><dd>${escapeHtml(flow.identity)}</dd>
<dt>${text(locale, 'web.farcaster.label.fid')}</dt><dd><code>${flow.fid}</code></dd>
</dl>
<p>${rich(locale, 'web.verify.expiresHtml', {}, { time })}</p>`;
}

function warning(domain: string, locale: string): string {
  return `<p class="warn" role="note">${rich(locale, 'web.farcaster.warningHtml', { domain })}</p>`;
}

function startForm(input: FarcasterPageInput, label: MessageKey, locale: string, secondary = false): string {
  return `<form method="post" action="${escapeHtml(input.paths.start)}"><button type="submit"${secondary ? ' class="secondary"' : ''}>${text(locale, label)}</button></form>`;
}

function stateBody(input: FarcasterPageInput, locale: string): string {
  const { flow, domain } = input;
  const linkedRoles = isLinkedRoleChallenge(flow);
  const state =
    linking(flow) || (flow.state === 'done' && input.done === undefined) ? 'approved' : flow.state;
  switch (state) {
    case 'done':
      return `<p role="status" class="${input.done?.kind === 'verified' || input.done?.kind === 'queued' ? 'success' : 'error'}">${escapeHtml(doneSentence(input.done ?? { kind: 'queued' }, flow, locale))}</p>`;
    case 'approved':
      return `<p role="status">${text(locale, 'web.farcaster.approved')}</p>
<p><a href="${escapeHtml(input.paths.self)}">${text(locale, 'web.farcaster.checkNow')}</a></p>`;
    case 'open': {
      const url = flow.channelUrl ?? '';
      const down = input.relayDown
        ? `<p role="alert" class="error">${text(locale, 'web.farcaster.relayDown')}</p>\n`
        : input.slowDownSeconds !== undefined
          ? `<p role="alert" class="error">${text(locale, 'web.limit.slowDown', { seconds: input.slowDownSeconds })}</p>\n`
          : '';
      return `${warning(domain, locale)}
${down}<p><a class="button" href="${escapeHtml(url)}" rel="noreferrer">${text(locale, 'web.farcaster.openApp')}</a></p>
<p>${text(locale, 'web.farcaster.scan')}</p>
<div class="qr" role="img" aria-label="${text(locale, 'web.farcaster.qrLabel')}">${qrSvg(url)}</div>
<p><code>${escapeHtml(url)}</code></p>
<p role="status" aria-live="polite">${text(locale, 'web.farcaster.waiting')}</p>
<p><a href="${escapeHtml(input.paths.self)}">${text(locale, 'web.farcaster.checkNow')}</a></p>
${startForm(input, 'web.farcaster.startAgain', locale, true)}`;
    }
    default: {
      if (!input.canStart)
        return `<p role="alert" class="error">${text(locale, 'web.farcaster.burned', { linkedRoles: String(linkedRoles) })}</p>`;
      const reason = refusalOf(flow);
      const refused = reason
        ? `<p role="alert" class="error">${escapeHtml(refusalSentence(reason, flow, domain, locale))}</p>\n`
        : '';
      const down = input.relayDownStart
        ? `<p role="alert" class="error">${text(locale, 'web.farcaster.relayDownStart')}</p>\n`
        : input.slowDownSeconds !== undefined
          ? `<p role="alert" class="error">${text(locale, 'web.limit.slowDown', { seconds: input.slowDownSeconds })}</p>\n`
          : '';
      return `${refused}${down}${warning(domain, locale)}
<p>${text(locale, 'web.farcaster.intro', { fid: flow.fid })}</p>
${startForm(input, reason || input.relayDownStart ? 'web.farcaster.startAgain' : 'web.farcaster.start', locale)}`;
    }
  }
}

function doneSentence(done: FlowDoneOutcome, flow: FarcasterFlow, locale: string): string {
  switch (done.kind) {
    case 'verified':
      return t(locale, 'web.farcaster.done.verified', { fid: flow.fid });
    case 'queued':
      return t(locale, 'web.farcaster.done.queued');
    case 'refused':
      return t(locale, 'web.farcaster.done.refused', { code: done.code, fid: flow.fid });
    case 'failed':
      return t(locale, 'web.farcaster.done.refused', { code: 'failed', fid: flow.fid });
  }
}

/** The approval link as a QR code: an SVG of dark modules (no script, no external image). */
function qrSvg(url: string): string {
  if (url === '') return '';
  // The SVG is the library's own markup of the code's modules: paths only, nothing taken from the URL text.
  return encodeQR(url, 'svg', { ecc: 'medium', border: 2 });
}
