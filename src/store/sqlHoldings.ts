/**
 * The ownership registry (`holdings`, migration 7): one holder per identity and per address in a scope
 * (a guild, or Linked Roles app-wide), enforced by the table's primary key and claimed inside the
 * transaction that writes the proof. On PostgreSQL each subject is locked first (an advisory lock held to
 * the end of the transaction, which also covers a subject nobody holds yet); SQLite's write transactions
 * (BEGIN IMMEDIATE) already run one at a time.
 */
import type { Row, SqlExecutor } from './sql.ts';
import type { Holding, HoldingClaim, HoldingRefusal } from './types.ts';

export const toHolding = (r: Row): Holding => ({
  scope: String(r.scope),
  kind: String(r.kind) as Holding['kind'],
  subject: String(r.subject),
  userId: String(r.user_id),
  identity: String(r.identity),
  proofMethod: String(r.proof_method) as Holding['proofMethod'],
  since: Number(r.since),
});

interface Subject {
  kind: Holding['kind'];
  subject: string;
  /** An alias of the claim's identity (held like a wallet), not the identity itself. */
  alias?: true;
}

/** The subjects a claim takes: its identity, its address when it has one, and its aliases. */
function subjectsOf(claim: HoldingClaim): Subject[] {
  const subjects: Subject[] = [{ kind: 'identity', subject: claim.identity }];
  if (claim.address !== null) subjects.push({ kind: 'address', subject: claim.address });
  for (const alias of new Set(claim.aliases ?? []))
    if (alias !== claim.identity) subjects.push({ kind: 'identity', subject: alias, alias: true });
  return subjects;
}

const keyOf = (s: { kind: string; subject: string }) => `${s.kind}\u0000${s.subject}`;

export interface ClaimResult {
  /** Holdings taken from other accounts (as they were before). */
  displaced: Holding[];
}

/**
 * Claim a proof's subjects for its account, inside `tx`. Refused (nothing written) when another account
 * holds the address and the proof is a record (unless that account holds it through a record proof of
 * the same name: a re-pointed record), or took a subject after the proof's challenge was made.
 * With `force` (a moderator's or a test's write) nothing is refused. The account's own holdings are
 * refreshed; a signature upgrades a record holding.
 */
export async function claimHoldings(
  tx: SqlExecutor,
  lock: string | null,
  claim: HoldingClaim,
  force = false,
): Promise<ClaimResult | { refusal: HoldingRefusal }> {
  const subjects = subjectsOf(claim);
  if (lock) {
    // Sorted, so two claims over the same pair of subjects lock them in the same order.
    for (const key of subjects.map((s) => `${claim.scope}\u0000${s.kind}\u0000${s.subject}`).sort())
      await tx.query(lock, [key]);
  }
  const held = new Map<string, Holding>();
  for (const s of subjects) {
    const [row] = await tx.query('SELECT * FROM holdings WHERE scope = $1 AND kind = $2 AND subject = $3', [
      claim.scope,
      s.kind,
      s.subject,
    ]);
    if (row) held.set(keyOf(s), toHolding(row));
  }
  const aliases = new Set(subjects.filter((s) => s.alias).map((s) => s.subject));
  const displaced: Holding[] = [];
  for (const holding of held.values()) {
    if (holding.userId === claim.userId) continue;
    if (!force) {
      const raced =
        holding.proofMethod === 'signature' &&
        claim.challengeIssuedAt !== undefined &&
        holding.since >= claim.challengeIssuedAt;
      if (raced) return { refusal: { code: 'raced', holding } };
      // An address that came with this very name's record moves with the name (its record names the
      // claimant now); any other holding of the address is a wallet a record cannot take.
      const sameRecord = holding.proofMethod === 'record' && holding.identity === claim.identity;
      if (holding.kind === 'address' && claim.proofMethod === 'record' && !sameRecord)
        return { refusal: { code: 'address_taken', holding } };
      // An alias is a key like a wallet: a record cannot take it from a signature.
      const alias = holding.kind === 'identity' && aliases.has(holding.subject);
      if (alias && claim.proofMethod === 'record' && holding.proofMethod === 'signature')
        return { refusal: { code: 'fid_taken', holding } };
    }
    displaced.push(holding);
  }
  for (const s of subjects) {
    const mine = held.get(keyOf(s));
    // The same account keeps its earlier holding unless this proof is stronger (a signature over a record).
    if (
      mine?.userId === claim.userId &&
      !(claim.proofMethod === 'signature' && mine.proofMethod === 'record')
    )
      continue;
    await tx.query(
      `INSERT INTO holdings (scope, kind, subject, user_id, identity, proof_method, since)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (scope, kind, subject) DO UPDATE SET user_id = excluded.user_id,
         identity = excluded.identity, proof_method = excluded.proof_method, since = excluded.since`,
      [claim.scope, s.kind, s.subject, claim.userId, claim.identity, claim.proofMethod, claim.at],
    );
  }
  return { displaced };
}

/**
 * An account stopped proving `identity` in a scope (unlinked, released, moved): the holdings it brought
 * go, except an address another of the account's live proofs still resolves to (passed as `keep`).
 */
export async function releaseHoldings(
  tx: SqlExecutor,
  scope: string,
  userId: string,
  identity: string,
  keep: { identity: string; address: string | null; proofMethod: string; since: number } | undefined,
): Promise<void> {
  const rows = await tx.query(
    'DELETE FROM holdings WHERE scope = $1 AND user_id = $2 AND identity = $3 RETURNING kind, subject',
    [scope, userId, identity],
  );
  if (!keep?.address) return;
  const address = rows.find((r) => String(r.kind) === 'address' && String(r.subject) === keep.address);
  if (!address) return;
  await tx.query(
    `INSERT INTO holdings (scope, kind, subject, user_id, identity, proof_method, since)
     VALUES ($1, 'address', $2, $3, $4, $5, $6) ON CONFLICT (scope, kind, subject) DO NOTHING`,
    [scope, keep.address, userId, keep.identity, keep.proofMethod, keep.since],
  );
}
