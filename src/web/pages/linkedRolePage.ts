/**
 * The Linked Roles page's states as HTML: choosing a proof (with the current connection, stale or not),
 * connected (with the metadata written to Discord), and every refusal. Every dynamic value is escaped;
 * the wallet-signature step is the signing page itself (`renderVerifyPage`).
 */

import { ApplicationRoleConnectionMetadataType } from 'discord-api-types/v10';
import type { FastifyReply } from 'fastify';
import { ROLE_CONNECTION_METADATA } from '../../gating/linkedRoles/linkedRoles.ts';
import { shortAddress, type UncountedCredential } from '../../gating/rules/credentialSubjects.ts';
import { sendHtml } from '../responses.ts';
import { escapeHtml, htmlDocument } from './verifyPage.ts';

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
  /** Too many proofs in a short while from this account or address: the page says how long to wait. */
  | 'slow_down';

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
  | 'write_pending';

export type LinkedRolePage =
  | {
      kind: 'prove';
      username: string;
      problem?: ProveProblem;
      identity?: string;
      /** With `slow_down`: seconds until the next proof is taken. */
      waitSeconds?: number;
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
      proof: 'record' | 'signature';
      metadata: Record<string, string>;
      /** Credentials of the connection that do not count, with why; each wallet gets a one-click signature. */
      uncounted?: UncountedCredential[];
    }
  /** `startUrl`: the Linked Roles start page below PUBLIC_URL. */
  | { kind: 'failed'; reason: LinkedRoleFailure; startUrl: string };

const PROBLEMS: Record<ProveProblem, string> = {
  not_named:
    'That identity’s record does not name your Discord username. Add it as the identity’s Discord link (or the ENS text record com.discord), or prove it with its wallet instead.',
  lookup_failed: 'Web3.bio could not be reached just now. Nothing was changed; try again in a minute.',
  invalid: 'That is not an identity Web3.bio knows how to read (try a name such as alice.eth or an address).',
  not_found: 'Web3.bio knows no such identity. Check the spelling, or enter its wallet address.',
  no_address:
    'That identity resolves to no Ethereum or Solana address to sign with. Enter the wallet address itself, or prove it by its record.',
  address_taken:
    'That identity resolves to a wallet another Discord account proved by signing with it. A record proves the name, not the wallet: nothing was changed. If the wallet is yours, sign with it instead.',
  raced:
    'Another Discord account proved that identity or its wallet with a signature while you were proving it. Nothing was changed; if it is yours, start again and sign with the wallet.',
  slow_down: 'Slow down: that was many proofs in a short while. Nothing was changed; try again in a minute.',
};

/** The problem's sentence; `slow_down` names the wait when it is known. */
function problemText(problem: ProveProblem, waitSeconds: number | undefined): string {
  if (problem !== 'slow_down' || waitSeconds === undefined) return PROBLEMS[problem];
  const wait = waitSeconds === 1 ? '1 second' : `${waitSeconds} seconds`;
  return `Slow down: that was many proofs in a short while. Nothing was changed; try again in ${wait}.`;
}

/** Why a connection no longer backs the member (its `releasedReason`), as the page and /whoami say it. */
const RELEASED_TEXT: Record<string, string> = {
  signed_elsewhere: 'its wallet signed for another Discord account',
  proven_elsewhere: 'another Discord account proved it (its record names that account now)',
  record_gone: 'its record no longer names your Discord username',
};

export function releasedText(reason: string): string {
  return RELEASED_TEXT[reason] ?? 'another Discord account proved it';
}

const FAILURE_TITLES: Record<LinkedRoleFailure, string> = {
  denied: 'Discord sign-in cancelled',
  bad_state: 'This sign-in has expired or was already used',
  failed: 'Discord did not complete the request',
  expired: 'This page has expired',
  other_account: 'This signing link belongs to someone else',
  link_used: 'This signing link was already used',
  link_expired: 'This signing link has expired',
  link_unknown: 'This signing link is not valid',
  write_pending: 'Proof kept: Discord has not taken the values yet',
};

const FAILURE_TEXT: Record<LinkedRoleFailure, string> = {
  denied: 'You cancelled the Discord sign-in. Nothing was changed.',
  bad_state:
    'Each sign-in works once, for 10 minutes, and only in the browser that started it. Nothing was changed.',
  failed: 'Discord did not confirm the request. Nothing was changed; try again in a moment.',
  expired: 'The Discord sign-in on this page lasts 10 minutes. Nothing was changed.',
  other_account:
    'It was made on the Linked Roles page of another Discord account, or in another browser: only that account, in that browser, can sign it. If someone sent you this link, do not sign anything for them: signing would give them your identity.',
  link_used: 'Each signing link works once. Nothing else was changed.',
  link_expired: 'Signing links work for 10 minutes. Nothing was changed.',
  link_unknown: 'Nothing was changed.',
  write_pending:
    'Your proof was kept, but Discord or Web3.bio did not answer just now, so the values behind your roles are not written yet. The bot writes them at its next re-check; you can close this tab, or start again to try now.',
};

/** Sends one state of the page (its forms post to this site only). */
export function sendLinkedRolePage(reply: FastifyReply, status: number, state: LinkedRolePage): FastifyReply {
  return sendHtml(reply, status, (cspNonce) => renderLinkedRolePage(state, cspNonce), { formAction: 'self' });
}

/** A refusal page whose "Start again" leads to PUBLIC_URL/linked-role. */
export function failed(
  publicUrl: string,
  reply: FastifyReply,
  status: number,
  reason: LinkedRoleFailure,
): FastifyReply {
  return sendLinkedRolePage(reply, status, { kind: 'failed', reason, startUrl: startPath(publicUrl) });
}

/** The path of PUBLIC_URL/linked-role (PUBLIC_URL may sit below a prefix on a reverse proxy). */
export function startPath(publicUrl: string): string {
  return `${new URL(publicUrl).pathname.replace(/\/+$/, '')}/linked-role`;
}

/** The whole page for one state; `cspNonce` must match the response's CSP nonce. */
export function renderLinkedRolePage(state: LinkedRolePage, cspNonce: string): string {
  switch (state.kind) {
    case 'prove':
      return htmlDocument('Connect a web3 identity', cspNonce, proveBody(state));
    case 'connected':
      return htmlDocument('Connected', cspNonce, connectedBody(state));
    case 'failed':
      return htmlDocument(
        FAILURE_TITLES[state.reason],
        cspNonce,
        `<p>${FAILURE_TEXT[state.reason]}</p>
<p><a href="${escapeHtml(state.startUrl)}">Start again</a></p>`,
      );
  }
}

function proveBody(state: Extract<LinkedRolePage, { kind: 'prove' }>): string {
  const current = state.current
    ? state.current.releasedReason
      ? `<p class="warn"><strong>${escapeHtml(state.current.identity)}</strong> no longer backs your roles: ${escapeHtml(releasedText(state.current.releasedReason))}. Discord now holds that you are not likely human. Prove an identity of your own to connect again.</p>`
      : state.current.stale
        ? `<p class="warn">Discord no longer accepts the connection to <strong>${escapeHtml(state.current.identity)}</strong> (the app was removed from your Authorized Apps, or its access was refused), so its roles stopped following the credentials. Prove an identity again to reconnect.</p>`
        : `<p>Connected now: <strong>${escapeHtml(state.current.identity)}</strong>. Proving another identity replaces it.</p>`
    : '';
  const problem = state.problem
    ? `<p role="alert" class="error">${escapeHtml(problemText(state.problem, state.waitSeconds))}</p>`
    : '';
  const uncounted = uncountedSection(
    state.current?.uncounted,
    'In your connection now, these credentials do not count:',
  );
  return `<p>Signed in to Discord as <strong>@${escapeHtml(state.username)}</strong>. Roles in every server that use this app follow the credentials of the identity you prove here.</p>
${current}${uncounted}${problem}<form method="post" action="prove">
<label for="identity">Identity: a name (alice.eth, bonfida.sol) or a wallet address</label>
<input id="identity" name="identity" required maxlength="200" autocomplete="off" value="${escapeHtml(state.identity ?? '')}">
<div class="choices">
<button type="submit" name="proof" value="record">Check its record</button>
<button type="submit" name="proof" value="signature" class="secondary">Sign with its wallet</button>
</div>
</form>
<p class="safe"><strong>Its record</strong>: the identity’s Discord link (or ENS text record <code>com.discord</code>) reads <strong>${escapeHtml(state.username)}</strong>. <strong>Its wallet</strong>: your Ethereum or Solana browser wallet signs a message naming @${escapeHtml(state.username)}. Signing is not a transaction and costs nothing; never type your seed phrase anywhere.</p>`;
}

function connectedBody(state: Extract<LinkedRolePage, { kind: 'connected' }>): string {
  const how = state.proof === 'signature' ? 'by a wallet signature' : 'by its record';
  const rows = ROLE_CONNECTION_METADATA.filter((m) => state.metadata[m.key] !== undefined)
    .map(
      (m) =>
        `<dt>${escapeHtml(MEMBER_LABELS[m.key] ?? m.name)}</dt><dd>${escapeHtml(metadataValue(m.type, state.metadata[m.key] ?? ''))}</dd>`,
    )
    .join('\n');
  return `<p>Your Discord account is linked to <strong>${escapeHtml(state.identity)}</strong>, proven ${how}. Discord now holds these values and gives the roles that ask for them; you can close this tab.</p>
<dl>
${rows}
</dl>
${uncountedSection(state.uncounted, 'These credentials do not count toward the values above:')}<p>They follow the identity’s credentials at every re-check. <code>/unverify</code> in any server clears them.</p>`;
}

const UNCOUNTED_LABELS = 3;
const UNCOUNTED_SUBJECTS = 10;

function labelsOf(entries: UncountedCredential[]): string {
  const labels = [...new Set(entries.map((e) => (e.label || e.source).slice(0, 80)))];
  const shown = labels.slice(0, UNCOUNTED_LABELS).map(escapeHtml);
  const more = labels.length - shown.length;
  return more > 0 ? `${shown.join(', ')} and ${more} more` : shown.join(', ');
}

/** One wallet or name whose credentials do not count: why, and for a wallet a form that signs with it. */
function uncountedItem(entries: UncountedCredential[]): string {
  const first = entries[0];
  if (!first) return '';
  const labels = labelsOf(entries);
  const wallet = first.signWith;
  const walletCode =
    wallet === null ? '' : `<code title="${escapeHtml(wallet)}">${escapeHtml(shortAddress(wallet))}</code>`;
  const why =
    first.reason === 'address_not_proven'
      ? `${labels}: from the wallet ${walletCode}, which you have not proven.`
      : first.reason === 'identity_not_proven'
        ? `${labels}: from <strong>${escapeHtml(first.subject.slice(0, 100))}</strong>, which you have not proven: prove that identity to count it.`
        : `${labels}: Web3.bio does not say whose it is, and <strong>${escapeHtml(first.lookedUp.slice(0, 100))}</strong> points at the wallet ${walletCode}, which you have not proven.`;
  const form =
    wallet === null
      ? ''
      : `<form method="post" action="prove"><input type="hidden" name="identity" value="${escapeHtml(wallet)}"><input type="hidden" name="proof" value="signature"><button type="submit" class="secondary">Sign with ${escapeHtml(shortAddress(wallet))}</button></form>`;
  return `<li>${why}${form}</li>`;
}

/**
 * Credentials that do not count: the identity's record proves the name, not the wallets its credentials
 * belong to. Empty when there are none (callers that pass nothing see no change).
 */
function uncountedSection(uncounted: UncountedCredential[] | undefined, intro: string): string {
  if (!uncounted || uncounted.length === 0) return '';
  const groups = new Map<string, UncountedCredential[]>();
  for (const e of uncounted) {
    const key = `${e.reason}\n${e.subject}\n${e.signWith ?? ''}`;
    groups.set(key, [...(groups.get(key) ?? []), e]);
  }
  const items = [...groups.values()].slice(0, UNCOUNTED_SUBJECTS).map(uncountedItem).join('\n');
  return `<section class="warn" aria-label="Credentials that do not count">
<p>${intro} they belong to a wallet or name you have not proven. Sign with the wallet to count them.</p>
<ul>
${items}
</ul>
</section>
`;
}

/** How the member reads a value (the metadata's own names are written for admins' role settings). */
const MEMBER_LABELS: Record<string, string> = {
  humanity_score: 'Humanity score',
  verified_days: 'First verified',
};

/** A metadata value as Discord's role settings mean it. */
function metadataValue(type: ApplicationRoleConnectionMetadataType, value: string): string {
  switch (type) {
    case ApplicationRoleConnectionMetadataType.BooleanEqual:
    case ApplicationRoleConnectionMetadataType.BooleanNotEqual:
      return value === '1' ? 'yes' : 'no';
    case ApplicationRoleConnectionMetadataType.DatetimeLessThanOrEqual:
    case ApplicationRoleConnectionMetadataType.DatetimeGreaterThanOrEqual:
      return Number.isNaN(Date.parse(value)) ? value : new Date(value).toISOString().slice(0, 10);
    default:
      return value;
  }
}
