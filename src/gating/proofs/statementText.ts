/**
 * Text fit for the statement of a Sign-In with Ethereum or Solana message. EIP-4361's grammar allows
 * there only RFC 3986's reserved and unreserved characters and the space: no `"`, no `%`, no line
 * break, no letter outside ASCII. Wallets parse the message before showing it as a sign-in request;
 * one that breaks the grammar is shown as an unchecked plain-text signature instead.
 * @see https://eips.ethereum.org/EIPS/eip-4361#message-format
 */

/** A text as the statement can carry it; `exact` when nothing had to change. */
export interface StatementText {
  text: string;
  exact: boolean;
}

/** ALPHA, DIGIT, RFC 3986's unreserved and reserved characters, and the space. */
const STATEMENT_CHAR = /^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;= ]$/;
/** Written for each run of characters the statement cannot carry, as encoders write an unmappable one. */
const GAP = '?';
const ELLIPSIS = '...';
/** Quotation marks the grammar lacks, written as the apostrophe it has. */
const QUOTES = /["`\u2018-\u201f\u2032\u2033\u301d-\u301f\uff02]/gu;
/** Marks left after decomposition, and characters that show nothing (joiners, bidi controls, tags). */
const INVISIBLE = /[\p{M}\p{Cf}\p{Cc}]/gu;
const SPACES = /[\s\p{Z}]+/gu;

/**
 * A Discord name as the statement can show it: compatibility letters folded to ASCII (`𝓒𝓻𝔂𝓹𝓽𝓸` as
 * `Crypto`, `Zoë` as `Zoe`), invisible characters dropped, spaces made plain, what is left outside
 * the grammar written as `?`, bounded to `max` characters.
 */
export function statementName(name: string, max: number): StatementText {
  const folded = name.normalize('NFKD').replace(SPACES, ' ').replace(INVISIBLE, '').replace(QUOTES, "'");
  return finish(name, withGaps(folded), max);
}

/**
 * A web3 identity as the statement can show it: as written, or with `?` for each run the grammar
 * cannot carry. Never folded, since a near-miss (`uni.eth` for `ünï.eth`) names another identity.
 */
export function statementIdentity(identity: string, max: number): StatementText {
  return finish(identity, withGaps(identity), max);
}

/** True when the text still has a letter or digit for a person to recognise. */
export function isReadable(text: string): boolean {
  return /[A-Za-z0-9]/.test(text);
}

/** One `?` per run of characters outside the grammar (spaces between two runs join them), trimmed. */
function withGaps(text: string): string {
  let out = '';
  let space = false;
  let gap = false;
  for (const char of text) {
    if (char === ' ') {
      space = out !== '';
      continue;
    }
    const allowed = STATEMENT_CHAR.test(char);
    if (!allowed && gap) {
      space = false;
      continue;
    }
    if (space) out += ' ';
    out += allowed ? char : GAP;
    space = false;
    gap = !allowed;
  }
  return out;
}

function finish(original: string, text: string, max: number): StatementText {
  const bounded = text.length > max ? `${text.slice(0, max - ELLIPSIS.length).trimEnd()}${ELLIPSIS}` : text;
  return { text: bounded, exact: bounded === original };
}
