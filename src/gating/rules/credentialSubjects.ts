/**
 * Whose credential is it: Web3.bio's answer for a name carries the credentials of the name and of the
 * wallet it resolves to, each entry naming its subject in `id` ("platform,identity"). A record proof
 * shows the member manages the name's records, not that they hold the wallet it points at (anyone can
 * point a free subname at a stranger's wallet), so an entry counts toward a grant (the human role, a
 * humanity score, Linked Roles' `likely_human`) only when its subject is something the member proved:
 *
 * - a proven identity itself (by record or by signature);
 * - an address that signed (a signature proof's `address` is its signer);
 * - with a record proof of an ENS-style name, the name's own owner or manager as `/domain` reports them:
 *   they wrote the record that names the member;
 * - with a Sign in with Farcaster proof (the FID, `farcaster,#<fid>`, signed for by its custody or auth
 *   address), the Farcaster account's own entries in the FID's answer: Web3.bio names them by the
 *   account's username (`farcaster,dwr`), and the answer for a FID is that one account's.
 *
 * Flags (isSpam, isRisky) are never weighed: every entry counts against the member, whoever it belongs to.
 * Pure: no clock, no lookups.
 */
import type { ProofMethod } from '../../store/types.ts';
import { isCredentialSignal } from '../../web3bio/credentials.ts';
import { EVM_ADDRESS, parseIdentity, SOLANA_ADDRESS } from '../../web3bio/identity.ts';
import { TEXT_RECORD_KINDS } from '../../web3bio/identityKind.ts';
import {
  type Credential,
  type CredentialCategory,
  type CredentialSet,
  PLATFORM_SEGMENTS,
  type PlatformSegment,
} from '../../web3bio/types.ts';

/** What a member proved, and how: the facts a credential's subject is weighed against. */
export interface ProofBehind {
  /** The identity as proven (a name or an address). */
  identity: string;
  proofMethod: ProofMethod;
  /** A signature proof: the signer. A record proof: the address the name resolved to (not proven by it). */
  address: string | null;
  /** The name's owner and manager as `/domain` reports them (read for record proofs of ENS-style names). */
  ownerAddress?: string | null;
  managerAddress?: string | null;
}

/** Why a credential does not count toward a grant. */
export type UncountedReason =
  /** Its subject is a wallet the member has not signed with (and not the owner or manager of the name). */
  | 'address_not_proven'
  /** Its subject is another name, one the member has not proven. */
  | 'identity_not_proven'
  /**
   * Its `id` is missing or unreadable, and the answer it came in also covers a wallet the member has not
   * proven (the address the name resolves to), so it may be that wallet's.
   */
  | 'unknown_subject';

/** A credential that would count toward a grant had the member proven its subject. */
export interface UncountedCredential {
  category: CredentialCategory;
  /** As Web3.bio sends it: not yet escaped. */
  label: string;
  source: string;
  /** An address (EVM lower-cased), a normalised identity, or for `unknown_subject` the identity looked up. */
  subject: string;
  subjectKind: 'address' | 'identity';
  reason: UncountedReason;
  /** The identity whose credential answer held it. */
  lookedUp: string;
  /** The wallet whose signature would make it count, when a signature would. */
  signWith: string | null;
}

export interface WeighedCredentials {
  /** Flags untouched; isHuman only the entries whose subject the member proved. */
  counted: CredentialSet;
  /** Signals (unexpired, not a false boolean) left out of `counted`, and why. */
  uncounted: UncountedCredential[];
}

export type CredentialSubject = { kind: 'address' | 'identity'; value: string };

/** The subjects a set of proofs makes the member's: identities by their normal form, addresses by key. */
export interface ProvenSubjects {
  identities: ReadonlySet<string>;
  addresses: ReadonlySet<string>;
}

const ZERO_ADDRESS = /^0x0{40}$/i;

/** How addresses compare: EVM case-insensitively (lower-cased), Solana base58 exactly; null for anything else. */
export function addressKey(text: string | null | undefined): string | null {
  if (typeof text !== 'string') return null;
  const trimmed = text.trim();
  if (EVM_ADDRESS.test(trimmed)) return trimmed.toLowerCase();
  return SOLANA_ADDRESS.test(trimmed) ? trimmed : null;
}

/** `0xcd13…c3b1` for an EVM address, `HKKp…NwEA` for a Solana one: for people, never for comparing. */
export function shortAddress(address: string): string {
  const head = address.startsWith('0x') ? 6 : 4;
  return address.length <= head + 6 ? address : `${address.slice(0, head)}…${address.slice(-4)}`;
}

function isPlatformSegment(value: string): value is PlatformSegment {
  return (PLATFORM_SEGMENTS as readonly string[]).includes(value);
}

/** An identity's normal form (what `/verify` stores), or null when it does not parse. */
function identityKey(text: string, platform = ''): string | null {
  const attempts: (() => string)[] = [];
  if (platform === 'farcaster' && /^#\d+$/.test(text)) {
    attempts.push(() => parseIdentity(`farcaster,${text}`).identity);
  }
  // A bare Lens handle (`lens,stani`) takes its platform's suffix; Farcaster names keep the universal form.
  if (isPlatformSegment(platform) && platform !== 'farcaster') {
    attempts.push(() => parseIdentity(text, platform).identity);
  }
  attempts.push(() => parseIdentity(text).identity);
  for (const attempt of attempts) {
    try {
      return attempt();
    } catch {
      // Try the next reading.
    }
  }
  return null;
}

/** The subject of a credential entry from its `id` ("platform,identity"); null when it has none we can read. */
export function credentialSubject(id: string | null): CredentialSubject | null {
  if (typeof id !== 'string') return null;
  const comma = id.indexOf(',');
  const platform = comma === -1 ? '' : id.slice(0, comma).trim().toLowerCase();
  const rest = (comma === -1 ? id : id.slice(comma + 1)).trim();
  if (rest === '') return null;
  const address = addressKey(rest);
  if (address !== null) return { kind: 'address', value: address };
  const identity = identityKey(rest, platform);
  return identity === null ? null : { kind: 'identity', value: identity };
}

function isTextRecordName(identity: string): boolean {
  try {
    return TEXT_RECORD_KINDS.has(parseIdentity(identity).kind);
  } catch {
    return false;
  }
}

/** Whether a record proof of this identity makes its `/domain` owner and manager count as proven. */
export function ownersCount(proof: Pick<ProofBehind, 'identity' | 'proofMethod'>): boolean {
  return proof.proofMethod === 'record' && isTextRecordName(proof.identity);
}

/** Everything the proofs prove: each identity, each signer, and the owner and manager behind each record. */
export function provenSubjects(proofs: readonly ProofBehind[]): ProvenSubjects {
  const identities = new Set<string>();
  const addresses = new Set<string>();
  const addAddress = (text: string | null | undefined) => {
    const key = addressKey(text);
    // An unset owner or manager reads as the zero address, which nobody signs for.
    if (key !== null && !ZERO_ADDRESS.test(key)) addresses.add(key);
  };
  for (const proof of proofs) {
    const own = credentialSubject(proof.identity);
    if (own?.kind === 'address') addresses.add(own.value);
    else identities.add(own?.value ?? proof.identity);
    if (proof.proofMethod === 'signature') addAddress(proof.address);
    if (ownersCount(proof)) {
      addAddress(proof.ownerAddress);
      addAddress(proof.managerAddress);
    }
  }
  return { identities, addresses };
}

const FID_IDENTITY = /^farcaster,#\d{1,20}$/;

/** A Sign in with Farcaster proof: the FID itself, proven by its custody or auth address's signature. */
function provesFarcasterAccount(proof: Pick<ProofBehind, 'identity' | 'proofMethod'>): boolean {
  return proof.proofMethod === 'signature' && FID_IDENTITY.test(proof.identity);
}

/** An entry Web3.bio files under a Farcaster account (`farcaster,<username or #fid>`). */
function isFarcasterEntry(id: string | null): boolean {
  return typeof id === 'string' && id.trim().toLowerCase().startsWith('farcaster,');
}

function isProven(subject: CredentialSubject, proven: ProvenSubjects): boolean {
  return subject.kind === 'address'
    ? proven.addresses.has(subject.value)
    : proven.identities.has(subject.value);
}

/**
 * The credentials looked up for `proof.identity`, weighed by subject. `others` are the member's other
 * proofs: a subject any of them proves counts here too (a wallet signed for in one link counts in the
 * answer of the name that points at it).
 */
export function weighCredentials(input: {
  credentials: CredentialSet;
  proof: ProofBehind;
  others?: readonly ProofBehind[];
  nowSec: number;
}): WeighedCredentials {
  const { credentials, proof, nowSec } = input;
  const proven = provenSubjects([proof, ...(input.others ?? [])]);
  const lookedUp = proof.identity;
  // An entry with no readable subject was returned for the identity looked up, and that answer covers the
  // identity and the address it resolves to (the wallet's own credentials come back for a name). It cannot
  // be told apart, so it counts only when both are proven: always for an address or a signature proof,
  // for a record proof only when the name's wallet is its owner or manager (or signed).
  const scopeAddress = addressKey(proof.address);
  const scopeProven = scopeAddress === null || proven.addresses.has(scopeAddress);
  const counted: Credential[] = [];
  const uncounted: UncountedCredential[] = [];
  const ownFarcaster = provesFarcasterAccount(proof);
  for (const c of credentials.isHuman ?? []) {
    const subject = credentialSubject(c.id);
    const own = ownFarcaster && subject?.kind === 'identity' && isFarcasterEntry(c.id);
    if (own || (subject === null ? scopeProven : isProven(subject, proven))) {
      counted.push(c);
      continue;
    }
    // Expired entries and false booleans earn nothing even when proven: nothing to offer for them.
    if (!isCredentialSignal(c, nowSec)) continue;
    uncounted.push({
      category: c.category,
      label: c.label,
      source: c.source,
      lookedUp,
      ...(subject === null
        ? { subject: lookedUp, subjectKind: 'identity', reason: 'unknown_subject', signWith: scopeAddress }
        : subject.kind === 'address'
          ? {
              subject: subject.value,
              subjectKind: 'address',
              reason: 'address_not_proven',
              signWith: subject.value,
            }
          : {
              subject: subject.value,
              subjectKind: 'identity',
              reason: 'identity_not_proven',
              signWith: null,
            }),
    });
  }
  return {
    counted: { isHuman: counted, isRisky: credentials.isRisky ?? [], isSpam: credentials.isSpam ?? [] },
    uncounted,
  };
}
