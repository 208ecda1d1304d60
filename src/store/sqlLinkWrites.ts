/**
 * Proving, saving, removing and releasing links (`links`), each in one transaction with the ownership
 * registry's holdings (sqlHoldings.ts) and its audit event, merged into `createSqlStore`.
 */
import type { SqlDriver, SqlExecutor, SqlParam } from './sql.ts';
import { dueNoLaterThan } from './sqlDueChecks.ts';
import { claimHoldings, releaseHoldings } from './sqlHoldings.ts';
import { LINK_WHERE, linkParams } from './sqlLinks.ts';
import type { SqlRows } from './sqlRows.ts';
import type { GatingStore, HoldingRefusal, LinkInput, LinkKey, LinkRecord } from './types.ts';

export type LinkWriteStore = Pick<GatingStore, 'saveLink' | 'proveLink' | 'removeLink' | 'releaseLink'>;

interface LinkWriter {
  driver: SqlDriver;
  now: () => number;
  rows: SqlRows;
}

/** A link stops proving: its holdings go, except an address another live link of the member resolves to. */
async function forgetHoldings(
  w: LinkWriter,
  tx: SqlExecutor,
  key: LinkKey,
  address: string | null,
): Promise<void> {
  const [other] = address
    ? await tx.query(
        `SELECT * FROM links WHERE guild_id = $1 AND user_id = $2 AND address = $3 AND identity <> $4
           AND released_at IS NULL ORDER BY proof_method DESC LIMIT 1`,
        [key.guildId, key.userId, address, key.identity],
      )
    : [];
  const keep = other ? w.rows.toLink(other) : undefined;
  await releaseHoldings(tx, key.guildId, key.userId, key.identity, keep && { ...keep, since: keep.provenAt });
}

/**
 * Claim the link's identity and address in the guild's registry, release the other members' links that
 * lost a subject to it, then save it: all in the caller's transaction.
 */
async function writeLink(
  w: LinkWriter,
  tx: SqlExecutor,
  link: LinkInput,
  reason: string,
  opts: { force: boolean; challengeIssuedAt?: number },
): Promise<{ link: LinkRecord; displaced: LinkRecord[] } | { refusal: HoldingRefusal }> {
  const { driver, now } = w;
  const { optStr, toJson, toLink, first, insertAudit } = w.rows;
  const claimed = await claimHoldings(
    tx,
    driver.dialect.subjectLock,
    {
      scope: link.guildId,
      userId: link.userId,
      identity: link.identity,
      address: link.address,
      proofMethod: link.proofMethod,
      at: now(),
      ...(link.aliases ? { aliases: link.aliases } : {}),
      ...(opts.challengeIssuedAt === undefined ? {} : { challengeIssuedAt: opts.challengeIssuedAt }),
    },
    opts.force,
  );
  if ('refusal' in claimed) return claimed;
  const at = now();
  const displaced: LinkRecord[] = [];
  for (const lost of claimed.displaced) {
    // An identity holding is released with the link that brought it (an alias's is another identity).
    const column = lost.kind === 'identity' ? 'identity' : 'address';
    const rows = await tx.query(
      `UPDATE links SET released_at = $4 WHERE guild_id = $1 AND user_id = $2 AND ${column} = $3
         AND released_at IS NULL RETURNING *`,
      [link.guildId, lost.userId, lost.kind === 'identity' ? lost.identity : lost.subject, at],
    );
    for (const row of rows) {
      const other = toLink(row);
      displaced.push(other);
      await forgetHoldings(w, tx, other, other.address);
      await insertAudit(tx, {
        guildId: other.guildId,
        userId: other.userId,
        kind: 'unlinked',
        reason:
          lost.kind === 'identity'
            ? `${link.identity} was proven by another member`
            : `its wallet ${lost.subject} was proven by another member`,
        details: { identity: other.identity, proofMethod: other.proofMethod, movedTo: link.userId },
        createdAt: at,
      });
    }
  }
  const [previous] = await tx.query(`SELECT address FROM links WHERE ${LINK_WHERE}`, linkParams(link));
  const rows = await tx.query(
    `INSERT INTO links (guild_id, user_id, identity, platform, address, proof_method, proven_at,
       last_check_at, last_check_ok, last_result)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
     ON CONFLICT (guild_id, user_id, identity) DO UPDATE SET
       platform = excluded.platform, address = excluded.address,
       proof_method = excluded.proof_method, proven_at = excluded.proven_at,
       last_check_at = excluded.last_check_at, last_check_ok = excluded.last_check_ok,
       last_result = excluded.last_result, released_at = NULL
     RETURNING *`,
    [
      link.guildId,
      link.userId,
      link.identity,
      link.platform,
      link.address,
      link.proofMethod,
      link.provenAt,
      link.lastCheckAt ?? null,
      link.lastCheckOk ?? null,
      toJson(link.lastResult),
    ],
  );
  const saved = first(rows, toLink);
  if (!saved) throw new Error('link upsert returned no row');
  // The same identity proven again with another address: the old address is no longer its.
  const oldAddress = previous ? optStr(previous.address) : null;
  if (oldAddress !== null && oldAddress !== link.address) {
    await tx.query(
      `DELETE FROM holdings WHERE scope = $1 AND user_id = $2 AND identity = $3 AND kind = 'address'
         AND subject = $4`,
      [link.guildId, link.userId, link.identity, oldAddress],
    );
  }
  await insertAudit(tx, {
    guildId: link.guildId,
    userId: link.userId,
    kind: 'linked',
    reason,
    details: { identity: link.identity, platform: link.platform, proofMethod: link.proofMethod },
  });
  return { link: saved, displaced };
}

/**
 * A link removed or released by `ended` (a statement returning its proof method and address), its holdings
 * forgotten and an `unlinked` event audited, in one transaction; false when there was no such link.
 */
async function endLink(
  w: LinkWriter,
  key: LinkKey,
  reason: string,
  ended: { sql: string; params: SqlParam[]; flagKept?: true },
): Promise<boolean> {
  const { str, optStr, insertAudit } = w.rows;
  return w.driver.transaction(async (tx) => {
    const [row] = await tx.query(ended.sql, ended.params);
    if (!row) return false;
    await forgetHoldings(w, tx, key, optStr(row.address));
    const flagKept = ended.flagKept && { flagKept: true };
    await insertAudit(tx, {
      guildId: key.guildId,
      userId: key.userId,
      kind: 'unlinked',
      reason,
      details: { identity: key.identity, proofMethod: str(row.proof_method), ...flagKept },
    });
    return true;
  });
}

export function createSqlLinkWrites(
  driver: SqlDriver,
  o: { now: () => number; rows: SqlRows },
): LinkWriteStore {
  const w: LinkWriter = { driver, ...o };
  const { now } = o;
  return {
    async saveLink(link: LinkInput, reason) {
      const written = await driver.transaction((tx) => writeLink(w, tx, link, reason, { force: true }));
      if ('refusal' in written) throw new Error('a forced link write was refused');
      return written.link;
    },

    async proveLink(link, reason, opts = {}) {
      return driver.transaction(async (tx) => {
        const written = await writeLink(w, tx, link, reason, { force: false, ...opts });
        if ('refusal' in written) return written;
        // The roles the proof decides are due now, for the prover and whoever lost a link to it.
        const members = new Set([link.userId, ...written.displaced.map((d) => d.userId)]);
        for (const userId of members)
          await dueNoLaterThan(tx, { guildId: link.guildId, userId, dueAt: link.provenAt });
        return written;
      });
    },

    async removeLink(key, reason) {
      return endLink(w, key, reason, {
        sql: `DELETE FROM links WHERE ${LINK_WHERE} RETURNING proof_method, address`,
        params: linkParams(key),
      });
    },

    async releaseLink(key, reason) {
      return endLink(w, key, reason, {
        sql: `UPDATE links SET released_at = $4 WHERE ${LINK_WHERE} AND released_at IS NULL
              RETURNING proof_method, address`,
        params: [...linkParams(key), now()],
        flagKept: true,
      });
    },
  };
}
