/**
 * Identity parsing: turn what a user typed into the normalised identity the server expects (and the
 * cache keys on), or reject it with a friendly reason before any request is made.
 */
import { LRUCache } from 'lru-cache';
import { InvalidIdentityError } from './errors.ts';
import {
  BARE_NAME_SUFFIX,
  describeKind,
  type IdentityKind,
  KIND_PLATFORM,
  ROUTE_EXAMPLES,
  ROUTE_KINDS,
} from './identityKind.ts';
import { normaliseEns } from './normaliseEns.ts';
import { BATCH_PLATFORMS, type BatchPlatform, type Platform, type PlatformSegment } from './types.ts';

export interface ParsedIdentity {
  /** What the caller passed. */
  input: string;
  /** Normalised form, as sent to the server and used in cache keys. */
  identity: string;
  kind: IdentityKind;
  /** The platform label the server uses for this identity. */
  platform: Platform;
}

export const MAX_IDENTITY_LENGTH = 256;

/**
 * Most parses remembered. ENSIP-15 normalisation makes parsing cost ~10 µs, and it runs on every lookup,
 * cache hits included. Only successful parses of inputs up to MAX_IDENTITY_LENGTH characters are kept,
 * so hostile input can churn the memo but never grow it past this many small entries.
 */
export const PARSE_MEMO_MAX = 2_048;
const parseMemo = new LRUCache<string, ParsedIdentity>({ max: PARSE_MEMO_MAX });

/** Parses currently remembered (for tests and diagnostics). */
export function parseMemoSize(): number {
  return parseMemo.size;
}

/** Human-readable list of accepted inputs, for error messages. */
export const ACCEPTED_FORMS: readonly string[] = [
  'an ENS name (vitalik.eth)',
  'an EVM address (0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045)',
  'a Solana address',
  'a Farcaster username (dwr, dwr.eth, dwr.farcaster) or FID (farcaster,#3)',
  'a Lens handle (stani.lens)',
  'a Basename (tony.base.eth or tony.base)',
  'a Linea name (name.linea.eth)',
  'a Solana name (bonfida.sol)',
  'an Unstoppable Domains name (sandy.nft)',
  'a .bit name',
];

/** A full EVM address (0x and 40 hex digits, either case). */
export const EVM_ADDRESS = /^0x[0-9a-f]{40}$/i;
const NEAR_EVM_ADDRESS = /^0x[0-9a-f]{30,}$/i;
export const SOLANA_ADDRESS = /^[1-9A-HJ-NP-Za-km-z]{32,44}$/;
const FID = /^farcaster,#(\d{1,20})$/i;
const LEGACY_FID = /^fid:(\d{1,20})$/i;
const FID_TAIL = /^#\d{1,20}$/;
const FARCASTER_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const LENS_HANDLE = /^[a-z0-9_][a-z0-9_-]{0,63}$/;
const FARCASTER_SUFFIX = /\.(farcaster|fcast\.id|farcaster\.eth)$/;

/** Discord's mass mentions: written like handles, and none. */
const MASS_MENTIONS: ReadonlySet<string> = new Set(['everyone', 'here']);

const CONTROL = /\p{Cc}/u;
const BIDI = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/;
const WHITESPACE = /\s/;
const PATH_CHARACTERS = /[/\\?#%]/;

/** Top-level names of Unstoppable Domains (the ones that do not clash with DNS names ENS resolves). */
const UNSTOPPABLE_TLDS = new Set([
  'crypto',
  'nft',
  'x',
  'wallet',
  'blockchain',
  'bitcoin',
  'dao',
  '888',
  'zil',
  'klever',
  'hi',
  'kresus',
  'polygon',
  'binanceus',
  'unstoppable',
  'pudgy',
  'austin',
  'bitget',
  'witg',
  'metropolis',
  'stepn',
  'ubu',
  'altimist',
  'pog',
  'kryptic',
  'benji',
  'chomp',
  'smobler',
  'xmr',
  'raiin',
  'tball',
]);

interface Detected {
  kind: IdentityKind;
  /** Normalised name or address; farcaster names without suffix, FIDs as `farcaster,#<fid>`. */
  value: string;
}

/**
 * Parse and normalise an identity. Without `platform` the result is what the universal routes take;
 * with it, what `/profile/<platform>/…` takes. Throws InvalidIdentityError with a friendly reason.
 */
export function parseIdentity(input: string, platform?: PlatformSegment): ParsedIdentity {
  const key = memoKey(input, platform);
  const known = key === undefined ? undefined : parseMemo.get(key);
  if (known !== undefined) return known;
  const parsed = Object.freeze(parse(input, platform));
  if (key !== undefined) parseMemo.set(key, parsed);
  return parsed;
}

/** The memo key, or undefined for inputs not worth keeping (or that could collide: not text, odd platform). */
function memoKey(input: string, platform: PlatformSegment | undefined): string | undefined {
  if (typeof input !== 'string' || input.length > MAX_IDENTITY_LENGTH) return undefined;
  if (platform === undefined) return `:${input}`;
  return Object.hasOwn(ROUTE_KINDS, platform) ? `${platform}:${input}` : undefined;
}

function parse(input: string, platform: PlatformSegment | undefined): ParsedIdentity {
  const detected = detect(input);
  if (!platform) {
    const identity = detected.kind === 'farcaster' ? `${detected.value}.farcaster` : detected.value;
    return { input, identity, kind: detected.kind, platform: KIND_PLATFORM[detected.kind] };
  }
  const suffix = BARE_NAME_SUFFIX[platform];
  const isBareName = detected.kind === 'farcaster' && !input.includes('.');
  const onRoute = isBareName && suffix ? detect(`${detected.value}${suffix}`, input) : detected;
  if (!ROUTE_KINDS[platform].includes(onRoute.kind)) {
    throw new InvalidIdentityError(
      input,
      `the ${platform} lookup takes ${ROUTE_EXAMPLES[platform]}, and this looks like ${describeKind(onRoute.kind)}`,
    );
  }
  return {
    input,
    identity: onRoute.value,
    kind: onRoute.kind,
    platform: platform === 'solana' ? 'sns' : platform,
  };
}

/**
 * Parse a batch id `<platform>,<identity>` (platform one of BATCH_PLATFORMS). A bare identity is
 * accepted too and gets the platform it is detected as.
 */
export function parseBatchId(input: string): { platform: BatchPlatform; identity: string; id: string } {
  const text = typeof input === 'string' ? input.trim() : '';
  const comma = text.indexOf(',');
  if (comma === -1) {
    const detected = detect(text, input);
    const platform = KIND_PLATFORM[detected.kind];
    if (!isBatchPlatform(platform)) {
      throw new InvalidIdentityError(input, `${describeKind(detected.kind)} cannot be looked up in a batch`);
    }
    return batchId(platform, detected);
  }
  const prefix = text.slice(0, comma).toLowerCase();
  const rest = text.slice(comma + 1);
  if (!isBatchPlatform(prefix)) {
    throw new InvalidIdentityError(
      input,
      `a batch id starts with one of ${BATCH_PLATFORMS.join(', ')} and a comma (ens,vitalik.eth)`,
    );
  }
  if (prefix === 'farcaster' && FID_TAIL.test(rest)) {
    return batchId('farcaster', detect(`farcaster,${rest}`, input));
  }
  if (prefix === 'ethereum') {
    const detected = detect(rest, input);
    if (detected.kind !== 'evm-address') {
      throw new InvalidIdentityError(input, 'an ethereum batch id takes an EVM address');
    }
    return batchId('ethereum', detected);
  }
  const parsed = parseIdentity(rest, prefix);
  return batchId(prefix, { kind: parsed.kind, value: parsed.identity });
}

/** Encode one path segment, always: reserved characters and dot-only segments included. */
export function encodeSegment(value: string): string {
  const encoded = encodeURIComponent(value).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return /^\.+$/.test(encoded) ? encoded.replaceAll('.', '%2E') : encoded;
}

function isBatchPlatform(value: string): value is BatchPlatform {
  return (BATCH_PLATFORMS as readonly string[]).includes(value);
}

function batchId(platform: BatchPlatform, detected: Detected) {
  const identity =
    detected.kind === 'farcaster-fid' ? detected.value.slice('farcaster,'.length) : detected.value;
  return { platform, identity, id: `${platform},${identity}` };
}

/**
 * `text` without the `@` that marks a handle as written in chat (`@dwr` is `dwr`, a Farcaster username;
 * `@vitalik.eth` is `vitalik.eth`), else `text` as it is: a doubled `@`, a bare one and Discord's
 * `@everyone` and `@here` are no handles.
 */
export function withoutHandleMark(text: string): string {
  if (!text.startsWith('@') || text.startsWith('@@')) return text;
  const handle = text.slice(1);
  return handle === '' || MASS_MENTIONS.has(handle.toLowerCase()) ? text : handle;
}

function detect(raw: string, original: string = raw): Detected {
  if (typeof raw !== 'string') throw new InvalidIdentityError(String(original), 'it is not text');
  const trimmed = raw.trim();
  if (trimmed === '') throw new InvalidIdentityError(original, 'it is empty');
  if (trimmed.length > MAX_IDENTITY_LENGTH) {
    throw new InvalidIdentityError(original, `it is longer than ${MAX_IDENTITY_LENGTH} characters`);
  }
  const text = withoutHandleMark(trimmed);

  const fid = FID.exec(text) ?? LEGACY_FID.exec(text);
  if (fid?.[1]) return { kind: 'farcaster-fid', value: `farcaster,#${BigInt(fid[1]).toString()}` };

  if (CONTROL.test(text)) throw new InvalidIdentityError(original, 'it contains control characters');
  if (BIDI.test(text)) {
    throw new InvalidIdentityError(original, 'it contains hidden text-direction characters');
  }
  if (WHITESPACE.test(text)) throw new InvalidIdentityError(original, 'it contains spaces');
  if (PATH_CHARACTERS.test(text)) {
    throw new InvalidIdentityError(original, 'it contains characters names never use (/ \\ ? # %)');
  }
  if (text.includes('..')) throw new InvalidIdentityError(original, 'it contains two dots in a row');

  if (!text.includes('.')) return detectDotless(text, original);
  return detectName(text, original);
}

function detectDotless(text: string, original: string): Detected {
  if (EVM_ADDRESS.test(text)) return { kind: 'evm-address', value: text.toLowerCase() };
  if (NEAR_EVM_ADDRESS.test(text)) {
    throw new InvalidIdentityError(original, 'an EVM address is 0x followed by 40 hexadecimal characters');
  }
  if (SOLANA_ADDRESS.test(text)) return { kind: 'solana-address', value: text };
  const lower = text.toLowerCase();
  if (FARCASTER_NAME.test(lower)) return { kind: 'farcaster', value: lower };
  // Not a plain username: let ENSIP-15 say what is wrong, so the reason is specific.
  normaliseEns(text, original);
  throw new InvalidIdentityError(original, 'it is not a name with an ending like .eth, nor an address');
}

function detectName(text: string, original: string): Detected {
  const lower = text.normalize('NFC').toLowerCase();
  // Lens handles allow underscores anywhere, which ENSIP-15 does not, so they skip it.
  if (lower.endsWith('.lens')) return lensHandle(lower, original);
  const name = normaliseEns(text, original);
  if (name.endsWith('.lens')) return lensHandle(name, original);
  const farcaster = FARCASTER_SUFFIX.exec(name);
  if (farcaster) {
    const username = name.slice(0, farcaster.index);
    if (!FARCASTER_NAME.test(username)) {
      throw new InvalidIdentityError(original, 'a Farcaster username has only letters, digits and dashes');
    }
    return { kind: 'farcaster', value: username };
  }
  if (name.endsWith('.base.eth')) return { kind: 'basenames', value: name };
  if (name.endsWith('.base')) return { kind: 'basenames', value: `${name}.eth` };
  if (name.endsWith('.linea.eth')) return { kind: 'linea', value: name };
  if (name.endsWith('.linea')) return { kind: 'linea', value: `${name}.eth` };
  if (name.endsWith('.sol')) return { kind: 'sns', value: name };
  if (name.endsWith('.bit')) return { kind: 'dotbit', value: name };
  const tld = name.slice(name.lastIndexOf('.') + 1);
  if (UNSTOPPABLE_TLDS.has(tld)) return { kind: 'unstoppabledomains', value: name };
  return { kind: 'ens', value: name };
}

function lensHandle(name: string, original: string): Detected {
  const handle = name.slice(0, -'.lens'.length);
  if (!LENS_HANDLE.test(handle)) {
    throw new InvalidIdentityError(original, 'a Lens handle has only letters, digits and underscores');
  }
  return { kind: 'lens', value: name };
}
