/**
 * Holdings conditions (issue #35) as a moderator types them and as the store keeps them:
 *
 * - `token` `<chain>:<contract>:<minimum>`: at least `<minimum>` whole units (`100`, `0.5`) of an ERC-20 or
 *   an SPL token, or of the chain's own coin with `native`;
 * - `nft` `<chain>:<contract>[:<minimum>]` (ERC-721, default 1), `<chain>:<contract>/<tokenId>[:<minimum>]`
 *   (ERC-1155).
 *
 * Pure: no RPC. Whether the chain is configured and the contract a token of that kind is checked when the
 * rule is added (holdingsReader.ts `probe`).
 */
import { EVM_ADDRESS, SOLANA_ADDRESS } from '../../web3bio/identity.ts';

export const HOLDING_CHAINS = [
  'ethereum',
  'optimism',
  'base',
  'arbitrum',
  'polygon',
  'linea',
  'solana',
] as const;
export type HoldingChain = (typeof HOLDING_CHAINS)[number];
export type EvmChain = Exclude<HoldingChain, 'solana'>;

/** What is read: an ERC-20 / SPL balance, the chain's coin, an ERC-721 balance or an ERC-1155 token's. */
export type HoldingStandard = 'fungible' | 'native' | 'erc721' | 'erc1155';

/** One asset on one chain; `contract` is a lower-cased EVM address, an SPL mint, or `native`. */
export interface HoldingTarget {
  chain: HoldingChain;
  standard: HoldingStandard;
  contract: string;
  /** ERC-1155 only: the token id in decimal. */
  tokenId: string | null;
}

export type HoldingCondition =
  | { kind: 'token'; chain: HoldingChain; contract: string; min: string }
  | { kind: 'nft'; chain: HoldingChain; contract: string; tokenId: string | null; min: number };

/** Why a typed value is no holdings condition (nothing stored). */
export type HoldingValueProblem =
  | 'unknown_chain'
  | 'bad_address'
  | 'bad_minimum'
  | 'bad_token_id'
  | 'no_nfts';

/** A minimum this long or a token id this large is refused: nothing real needs more. */
const MINIMUM = /^(\d{1,30})(?:\.(\d{1,30}))?$/;
const TOKEN_ID = /^\d{1,78}$/;
const MAX_UINT256 = (1n << 256n) - 1n;
export const MAX_NFT_MINIMUM = 1_000_000_000;

export function isHoldingChain(text: string): text is HoldingChain {
  return (HOLDING_CHAINS as readonly string[]).includes(text);
}

/** `0.50` -> `0.5`, `007` -> `7`; null when not a positive decimal. */
export function canonicalMinimum(text: string): string | null {
  const match = MINIMUM.exec(text);
  if (!match) return null;
  const whole = (match[1] ?? '0').replace(/^0+(?=\d)/, '');
  const fraction = (match[2] ?? '').replace(/0+$/, '');
  if (/^0*$/.test(whole) && fraction === '') return null;
  return fraction === '' ? whole : `${whole}.${fraction}`;
}

/** A whole-unit minimum in base units for `decimals`, rounded up (a minimum never gets lower). */
export function minimumUnits(min: string, decimals: number): bigint {
  const [whole = '0', fraction = ''] = min.split('.');
  const kept = fraction.slice(0, decimals).padEnd(decimals, '0');
  const units = BigInt(whole) * 10n ** BigInt(decimals) + BigInt(kept === '' ? '0' : kept);
  return fraction.length > decimals && /[1-9]/.test(fraction.slice(decimals)) ? units + 1n : units;
}

/** Base units as whole units: 150000000 with 6 decimals -> `150`. */
export function formatUnits(amount: bigint, decimals: number): string {
  const scale = 10n ** BigInt(decimals);
  const fraction = (amount % scale).toString().padStart(decimals, '0').replace(/0+$/, '');
  return fraction === '' ? `${amount / scale}` : `${amount / scale}.${fraction}`;
}

function contractOf(chain: HoldingChain, text: string): string | null {
  if (chain === 'solana') return SOLANA_ADDRESS.test(text) ? text : null;
  return EVM_ADDRESS.test(text) ? text.toLowerCase() : null;
}

type Parsed<T> = { ok: true; condition: T } | { ok: false; problem: HoldingValueProblem };

function splitValue(text: string): { chain: string; contract: string; min: string | undefined } | null {
  const parts = text.trim().split(':');
  if (parts.length < 2 || parts.length > 3) return null;
  const [chain = '', contract = '', min] = parts.map((p) => p.trim());
  return { chain: chain.toLowerCase(), contract, min };
}

/** `kind:token` `<chain>:<contract|native>:<minimum>`. */
export function parseTokenValue(text: string): Parsed<HoldingCondition & { kind: 'token' }> {
  const split = splitValue(text);
  if (!split) return { ok: false, problem: 'bad_minimum' };
  if (!isHoldingChain(split.chain)) return { ok: false, problem: 'unknown_chain' };
  const chain = split.chain;
  const contract = split.contract.toLowerCase() === 'native' ? 'native' : contractOf(chain, split.contract);
  if (contract === null) return { ok: false, problem: 'bad_address' };
  const min = split.min === undefined ? null : canonicalMinimum(split.min);
  if (min === null) return { ok: false, problem: 'bad_minimum' };
  return { ok: true, condition: { kind: 'token', chain, contract, min } };
}

/** `kind:nft` `<chain>:<contract>[/<tokenId>][:<minimum>]`. */
export function parseNftValue(text: string): Parsed<HoldingCondition & { kind: 'nft' }> {
  const split = splitValue(text);
  if (!split) return { ok: false, problem: 'bad_address' };
  if (!isHoldingChain(split.chain)) return { ok: false, problem: 'unknown_chain' };
  if (split.chain === 'solana') return { ok: false, problem: 'no_nfts' };
  const chain = split.chain;
  const slash = split.contract.indexOf('/');
  const contract = contractOf(chain, slash === -1 ? split.contract : split.contract.slice(0, slash));
  if (contract === null) return { ok: false, problem: 'bad_address' };
  let tokenId: string | null = null;
  if (slash !== -1) {
    const id = split.contract.slice(slash + 1).trim();
    if (!TOKEN_ID.test(id) || BigInt(id) > MAX_UINT256) return { ok: false, problem: 'bad_token_id' };
    tokenId = BigInt(id).toString();
  }
  const min = split.min === undefined ? 1 : /^\d{1,10}$/.test(split.min) ? Number(split.min) : 0;
  if (min < 1 || min > MAX_NFT_MINIMUM) return { ok: false, problem: 'bad_minimum' };
  return { ok: true, condition: { kind: 'nft', chain, contract, tokenId, min } };
}

/** The stored value of a holdings condition (after `token:` or `nft:`). */
export function holdingValueKey(c: HoldingCondition): string {
  if (c.kind === 'token') return `${c.chain}:${c.contract}:${c.min}`;
  return `${c.chain}:${c.contract}${c.tokenId === null ? '' : `/${c.tokenId}`}:${c.min}`;
}

/** What a condition reads. */
export function targetOf(c: HoldingCondition): HoldingTarget {
  if (c.kind === 'token') {
    return {
      chain: c.chain,
      standard: c.contract === 'native' ? 'native' : 'fungible',
      contract: c.contract,
      tokenId: null,
    };
  }
  return {
    chain: c.chain,
    standard: c.tokenId === null ? 'erc721' : 'erc1155',
    contract: c.contract,
    tokenId: c.tokenId,
  };
}

/** One string per target: the key of its cached metadata and, with an owner, of its balances. */
export function targetKey(t: HoldingTarget): string {
  return `${t.chain}:${t.standard}:${t.contract}${t.tokenId === null ? '' : `/${t.tokenId}`}`;
}

/** Which chain an address can hold on: EVM addresses on every EVM chain, Solana ones on Solana. */
export function holdsOn(address: string, chain: HoldingChain): boolean {
  return chain === 'solana' ? SOLANA_ADDRESS.test(address) : EVM_ADDRESS.test(address);
}

/** One balance to read. */
export interface HoldingQuery {
  target: HoldingTarget;
  owner: string;
}

/** What a batch found: base units per `balanceKey` and decimals per `targetKey`; `null`: unknown. */
export interface HoldingsBatch {
  balances: ReadonlyMap<string, bigint | null>;
  decimals: ReadonlyMap<string, number | null>;
}

/** A balance's key in a batch: the token and its owner. */
export const balanceKey = (q: HoldingQuery): string => `${targetKey(q.target)}@${q.owner}`;

/**
 * The name of each chain's own coin, as `viem/chains` names it (a test holds the two together): written
 * here so that words about a rule load no chain definitions, as in a web replica.
 */
const NATIVE_SYMBOLS: Readonly<Record<HoldingChain, string>> = {
  ethereum: 'ETH',
  optimism: 'ETH',
  base: 'ETH',
  arbitrum: 'ETH',
  polygon: 'POL',
  linea: 'ETH',
  solana: 'SOL',
};

/** The name of each chain's own coin (ETH, POL, SOL). */
export function nativeSymbol(chain: HoldingChain): string {
  return NATIVE_SYMBOLS[chain];
}
