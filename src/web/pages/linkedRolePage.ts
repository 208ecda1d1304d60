/**
 * The Linked Roles page's states as HTML: choosing a proof (with the current connection, stale or not),
 * connected (with the metadata written to Discord), and every refusal, in the member's language. Every
 * dynamic value is escaped;
 * the wallet-signature step is the signing page itself (`renderVerifyPage`).
 */

import { ApplicationRoleConnectionMetadataType } from 'discord-api-types/v10';
import type { FastifyReply } from 'fastify';
import { ROLE_CONNECTION_METADATA } from '../../gating/linkedRoles/linkedRoles.ts';
import { shortAddress, type UncountedCredential } from '../../gating/rules/credentialSubjects.ts';
import { DEFAULT_LOCALE, type MessageKey, t } from '../../i18n/index.ts';
import { sendHtml } from '../responses.ts';
import { htmlDocument } from './document.ts';
import { escapeHtml, rich, text } from './words.ts';

/** Why the identity typed on the page cannot be used (the member can try again on the same page). */
export type ProveProblem =
  /** Its record does not name the member's Discord username. */
  | 'not_named'
  /** Web3.bio failed: nothing was changed. */
  | 'lookup_failed'
  | 'invalid'
  | 'not_found'
  /** No Ethereum or Solana address to sign with. */
  | 'no_address'
  /** The name resolves to a wallet another Discord account proved by signing: a record cannot take it. */
  | 'address_taken'
  /** Another Discord account proved it by signature after this proof started. */
  | 'raced'
  /** A Farcaster account another Discord account proved by Sign in with Farcaster: a record cannot take it. */
  | 'fid_taken'
  /** Too many proofs in a short while from this account or address: the page says how long to wait. */
  | 'slow_down'
  /** Sign in with Farcaster was asked for something that is not a Farcaster account Web3.bio knows. */
  | 'not_farcaster';

/** Why the page cannot go on (the member starts again). */
export type LinkedRoleFailure =
  | 'denied'
  | 'bad_state'
  | 'failed'
  | 'expired'
  /** A signing link opened in a browser or Discord account other than the one that made it. */
  | 'other_account'
  | 'link_used'
  | 'link_expired'
  | 'link_unknown'
  /** The proof was kept but Discord or Web3.bio failed before the values were written. */
  | 'write_pending'
  /** A valid Farcaster approval, but another account proved the FID after this sign-in started. */
  | 'farcaster_taken';

export type LinkedRolePage =
  | {
      kind: 'prove';
      username: string;
      problem?: ProveProblem;
      identity?: string;
      /** With `slow_down`: seconds until the next proof is taken. */
      waitSeconds?: number;
      /** Sign in with Farcaster is offered (OPTIMISM_RPC_URL is set). */
      farcaster?: boolean;
      /**
       * The member's connection now, so a stale or released one can be seen and replaced, with the
       * credentials that do not count in it (each wallet gets a one-click signature).
       */
      current?: {
        identity: string;
        stale: boolean;
        releasedReason?: string | null;
        uncounted?: UncountedCredential[];
      };
    }
  | {
      kind: 'connected';
      identity: string;
      proof: 'record' | 'signature' | 'farcaster';
      metadata: Record<string, string>;
      /** Credentials of the connection that do not count, with why; each wallet gets a one-click signature. */
      uncounted?: UncountedCredential[];
    }
  /** `startUrl`: the Linked Roles start page below PUBLIC_URL. */
  | { kind: 'failed'; reason: LinkedRoleFailure; startUrl: string };

/** How long a sign-in, the page's session and a signing link last, as the pages say it. */
const MINUTES = 10;

const PROBLEMS: Record<ProveProblem, MessageKey> = {
  not_named: 'web.linkedRole.problem.notNamed',
  lookup_failed: 'web.linkedRole.problem.lookupFailed',
  invalid: 'web.linkedRole.problem.invalid',
  not_found: 'web.linkedRole.problem.notFound',
  no_address: 'web.linkedRole.problem.noAddress',
  address_taken: 'web.linkedRole.problem.addressTaken',
  raced: 'web.linkedRole.problem.raced',
  fid_taken: 'web.linkedRole.problem.fidTaken',
  slow_down: 'web.linkedRole.problem.slowDown',
  not_farcaster: 'web.linkedRole.problem.notFarcaster',
};

/** The problem's sentence; `slow_down` names the wait when it is known. */
function problemText(problem: ProveProblem, waitSeconds: number | undefined, locale: string): string {
  if (problem !== 'slow_down' || waitSeconds === undefined) return t(locale, PROBLEMS[problem]);
  return t(locale, 'web.linkedRole.problem.slowDownFor', { seconds: waitSeconds });
}

/** Why a connection no longer backs the member (its `releasedReason`), as the page and /whoami say it. */
const RELEASED_TEXT: Record<string, MessageKey> = {
  signed_elsewhere: 'web.linkedRole.released.signedElsewhere',
  proven_elsewhere: 'web.linkedRole.released.provenElsewhere',
  record_gone: 'web.linkedRole.released.recordGone',
};

export function releasedText(reason: string, locale: string = DEFAULT_LOCALE): string {
  return t(locale, RELEASED_TEXT[reason] ?? 'web.linkedRole.released.other');
}

const FAILURE_TITLES: Record<LinkedRoleFailure, MessageKey> = {
  denied: 'web.linkedRole.failureTitle.denied',
  bad_state: 'web.linkedRole.failureTitle.badState',
  failed: 'web.linkedRole.failureTitle.failed',
  expired: 'web.linkedRole.failureTitle.expired',
  other_account: 'web.linkedRole.failureTitle.otherAccount',
  link_used: 'web.linkedRole.failureTitle.linkUsed',
  link_expired: 'web.linkedRole.failureTitle.linkExpired',
  link_unknown: 'web.linkedRole.failureTitle.linkUnknown',
  write_pending: 'web.linkedRole.failureTitle.writePending',
  farcaster_taken: 'web.linkedRole.failureTitle.farcasterTaken',
};

const FAILURE_TEXT: Record<LinkedRoleFailure, MessageKey> = {
  denied: 'web.linkedRole.failure.denied',
  bad_state: 'web.linkedRole.failure.badState',
  failed: 'web.linkedRole.failure.failed',
  expired: 'web.linkedRole.failure.expired',
  other_account: 'web.linkedRole.failure.otherAccount',
  link_used: 'web.linkedRole.failure.linkUsed',
  link_expired: 'web.linkedRole.failure.linkExpired',
  link_unknown: 'web.linkedRole.failure.linkUnknown',
  write_pending: 'web.linkedRole.failure.writePending',
  farcaster_taken: 'web.linkedRole.failure.farcasterTaken',
};

/** Sends one state of the page in `locale` (its forms post to this site only). */
export function sendLinkedRolePage(
  reply: FastifyReply,
  status: number,
  state: LinkedRolePage,
  locale: string,
): FastifyReply {
  return sendHtml(reply, status, (cspNonce) => renderLinkedRolePage(state, cspNonce, locale), {
    formAction: 'self',
    locale,
  });
}

/** A refusal page whose "Start again" leads to PUBLIC_URL/linked-role. */
export function failed(
  publicUrl: string,
  reply: FastifyReply,
  status: number,
  reason: LinkedRoleFailure,
  locale: string,
): FastifyReply {
  return sendLinkedRolePage(
    reply,
    status,
    { kind: 'failed', reason, startUrl: startPath(publicUrl) },
    locale,
  );
}

/** The path of PUBLIC_URL/linked-role (PUBLIC_URL may sit below a prefix on a reverse proxy). */
export function startPath(publicUrl: string): string {
  return `${new URL(publicUrl).pathname.replace(/\/+$/, '')}/linked-role`;
}

/** The whole page for one state; `cspNonce` must match the response's CSP nonce. */
export function renderLinkedRolePage(
  state: LinkedRolePage,
  cspNonce: string,
  locale: string = DEFAULT_LOCALE,
): string {
  switch (state.kind) {
    case 'prove':
      return htmlDocument(
        locale,
        t(locale, 'web.linkedRole.title.prove'),
        cspNonce,
        proveBody(state, locale),
      );
    case 'connected':
      return htmlDocument(
        locale,
        t(locale, 'web.linkedRole.title.connected'),
        cspNonce,
        connectedBody(state, locale),
      );
    case 'failed':
      return htmlDocument(
        locale,
        t(locale, FAILURE_TITLES[state.reason]),
        cspNonce,
        `<p>${text(locale, FAILURE_TEXT[state.reason], { minutes: MINUTES })}</p>
<p><a href="${escapeHtml(state.startUrl)}">${text(locale, 'web.linkedRole.startAgain')}</a></p>`,
      );
  }
}

function currentText(
  current: NonNullable<Extract<LinkedRolePage, { kind: 'prove' }>['current']>,
  locale: string,
) {
  const identity = current.identity;
  if (current.releasedReason)
    return `<p class="warn">${rich(locale, 'web.linkedRole.releasedHtml', { identity, reason: releasedText(current.releasedReason, locale) })}</p>`;
  if (current.stale) return `<p class="warn">${rich(locale, 'web.linkedRole.staleHtml', { identity })}</p>`;
  return `<p>${rich(locale, 'web.linkedRole.connectedNowHtml', { identity })}</p>`;
}

function proveBody(state: Extract<LinkedRolePage, { kind: 'prove' }>, locale: string): string {
  const current = state.current ? currentText(state.current, locale) : '';
  const problem = state.problem
    ? `<p role="alert" class="error">${escapeHtml(problemText(state.problem, state.waitSeconds, locale))}</p>`
    : '';
  const uncounted = uncountedSection(state.current?.uncounted, 'web.linkedRole.uncounted.now', locale);
  const username = state.username;
  return `<p>${rich(locale, 'web.linkedRole.signedInHtml', { username })}</p>
${current}${uncounted}${problem}<form method="post" action="prove">
<label for="identity">${text(locale, 'web.linkedRole.identityLabel')}</label>
<input id="identity" name="identity" required maxlength="200" autocomplete="off" value="${escapeHtml(state.identity ?? '')}">
<div class="choices">
<button type="submit" name="proof" value="record">${text(locale, 'web.linkedRole.checkRecord')}</button>
<button type="submit" name="proof" value="signature" class="secondary">${text(locale, 'web.linkedRole.signWallet')}</button>
${state.farcaster ? `<button type="submit" name="proof" value="farcaster" class="secondary">${text(locale, 'web.linkedRole.signFarcaster')}</button>\n` : ''}</div>
</form>
<p class="safe">${rich(locale, 'web.linkedRole.howHtml', { username })}</p>${state.farcaster ? `\n<p class="safe">${rich(locale, 'web.linkedRole.farcasterHowHtml')}</p>` : ''}`;
}

function connectedBody(state: Extract<LinkedRolePage, { kind: 'connected' }>, locale: string): string {
  const rows = ROLE_CONNECTION_METADATA.filter((m) => state.metadata[m.key] !== undefined)
    .map((m) => {
      const label = MEMBER_LABELS[m.key];
      const value = metadataValue(m.type, state.metadata[m.key] ?? '', locale);
      return `<dt>${label ? text(locale, label) : escapeHtml(m.name)}</dt><dd>${escapeHtml(value)}</dd>`;
    })
    .join('\n');
  return `<p>${rich(locale, 'web.linkedRole.connectedHtml', { identity: state.identity, proof: state.proof })}</p>
<dl>
${rows}
</dl>
${uncountedSection(state.uncounted, 'web.linkedRole.uncounted.connected', locale)}<p>${rich(locale, 'web.linkedRole.connectedAfterHtml')}</p>`;
}

const UNCOUNTED_LABELS = 3;
const UNCOUNTED_SUBJECTS = 10;

/** The credentials' labels, escaped: the first few, then how many more. */
function labelsOf(entries: UncountedCredential[], locale: string): string {
  const labels = [...new Set(entries.map((e) => (e.label || e.source).slice(0, 80)))];
  const shown = labels.slice(0, UNCOUNTED_LABELS).map(escapeHtml);
  const more = labels.length - shown.length;
  if (more <= 0) return shown.join(', ');
  return rich(locale, 'web.linkedRole.uncounted.moreHtml', { more }, { labels: shown.join(', ') });
}

/** One wallet or name whose credentials do not count: why, and for a wallet a form that signs with it. */
function uncountedItem(entries: UncountedCredential[], locale: string): string {
  const first = entries[0];
  if (!first) return '';
  const labels = labelsOf(entries, locale);
  const wallet = first.signWith;
  const walletCode =
    wallet === null ? '' : `<code title="${escapeHtml(wallet)}">${escapeHtml(shortAddress(wallet))}</code>`;
  const markup = { labels, wallet: walletCode };
  const why =
    first.reason === 'address_not_proven'
      ? rich(locale, 'web.linkedRole.uncounted.addressHtml', {}, markup)
      : first.reason === 'identity_not_proven'
        ? rich(
            locale,
            'web.linkedRole.uncounted.identityHtml',
            { subject: first.subject.slice(0, 100) },
            markup,
          )
        : rich(
            locale,
            'web.linkedRole.uncounted.unknownOwnerHtml',
            { lookedUp: first.lookedUp.slice(0, 100) },
            markup,
          );
  const form =
    wallet === null
      ? ''
      : `<form method="post" action="prove"><input type="hidden" name="identity" value="${escapeHtml(wallet)}"><input type="hidden" name="proof" value="signature"><button type="submit" class="secondary">${text(locale, 'web.linkedRole.uncounted.signWith', { address: shortAddress(wallet) })}</button></form>`;
  return `<li>${why}${form}</li>`;
}

/**
 * Credentials that do not count: the identity's record proves the name, not the wallets its credentials
 * belong to. Empty when there are none (callers that pass nothing see no change).
 */
function uncountedSection(
  uncounted: UncountedCredential[] | undefined,
  intro: MessageKey,
  locale: string,
): string {
  if (!uncounted || uncounted.length === 0) return '';
  const groups = new Map<string, UncountedCredential[]>();
  for (const e of uncounted) {
    const key = `${e.reason}\n${e.subject}\n${e.signWith ?? ''}`;
    groups.set(key, [...(groups.get(key) ?? []), e]);
  }
  const items = [...groups.values()]
    .slice(0, UNCOUNTED_SUBJECTS)
    .map((entries) => uncountedItem(entries, locale))
    .join('\n');
  return `<section class="warn" aria-label="${text(locale, 'web.linkedRole.uncounted.label')}">
<p>${text(locale, intro)}</p>
<ul>
${items}
</ul>
</section>
`;
}

/** How the member reads a value (the metadata's own names are written for admins' role settings). */
const MEMBER_LABELS: Record<string, MessageKey> = {
  humanity_score: 'web.linkedRole.label.humanityScore',
  verified_days: 'web.linkedRole.label.verifiedDays',
};

/** A metadata value as Discord's role settings mean it. */
function metadataValue(type: ApplicationRoleConnectionMetadataType, value: string, locale: string): string {
  switch (type) {
    case ApplicationRoleConnectionMetadataType.BooleanEqual:
    case ApplicationRoleConnectionMetadataType.BooleanNotEqual:
      return t(locale, value === '1' ? 'web.linkedRole.yes' : 'web.linkedRole.no');
    case ApplicationRoleConnectionMetadataType.DatetimeLessThanOrEqual:
    case ApplicationRoleConnectionMetadataType.DatetimeGreaterThanOrEqual:
      return Number.isNaN(Date.parse(value)) ? value : new Date(value).toISOString().slice(0, 10);
    default:
      return value;
  }
}
