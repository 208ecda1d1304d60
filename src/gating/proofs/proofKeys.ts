/**
 * The keys proofs are stored under, in a module of their own, free of viem and the signature code: a web
 * replica reads them (accountProofs.ts) without loading either.
 */

/**
 * The `guildId` of a challenge made on the Linked Roles page: a connection is for the Discord account in
 * every server, not for one (no real snowflake is 0). Such a challenge is only served and verified there.
 */
export const LINKED_ROLES_SCOPE = '0';

/** The identity a Farcaster sign-in proves: the FID itself, in Web3.bio's form. */
export function fidIdentity(fid: number): string {
  return `farcaster,#${fid}`;
}
