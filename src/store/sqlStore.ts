import type { Row, SqlDriver, SqlExecutor } from './sql.ts';
import { createSqlAuditEvents } from './sqlAuditEvents.ts';
import { createSqlDashboard } from './sqlDashboard.ts';
import { createSqlDueChecks, dueNoLaterThan } from './sqlDueChecks.ts';
import { createSqlExemptions } from './sqlExemptions.ts';
import { createSqlFarcasterFlows } from './sqlFarcasterFlows.ts';
import { createSqlGuildAuthority } from './sqlGuildAuthority.ts';
import { createSqlGuildLeases } from './sqlGuildLeases.ts';
import { createSqlHandoffs } from './sqlHandoffs.ts';
import { claimHoldings, releaseHoldings, toHolding } from './sqlHoldings.ts';
import { createSqlNonces } from './sqlNonces.ts';
import { createSqlPendingLosses } from './sqlPendingLosses.ts';
import { createSqlRoleConnections } from './sqlRoleConnections.ts';
import { createSqlRoleQueue } from './sqlRoleQueue.ts';
import { createSqlRoleRules } from './sqlRoleRules.ts';
import { sqlRows } from './sqlRows.ts';
import { createSqlSignedProofs } from './sqlSignedProofs.ts';
import { createSqlVerifyPanels } from './sqlVerifyPanels.ts';
import type {
  GatingStore,
  GuildSettingsInput,
  HoldingRefusal,
  LinkCheck,
  LinkInput,
  LinkKey,
  LinkRecord,
  StoreOptions,
} from './types.ts';

export const DEFAULT_LEASE_MS = 60_000;

/** Every column of `links` but `last_result` (a link's stored credentials, JSON). */
const LINK_SUMMARY_COLUMNS =
  'guild_id, user_id, identity, platform, address, proof_method, proven_at, last_check_at, last_check_ok, released_at';

/** The `GatingStore` both implementations share, on top of a dialect-aware driver. */
export function createSqlStore(driver: SqlDriver, opts: StoreOptions = {}): GatingStore {
  const now = opts.now ?? Date.now;
  const leaseMs = opts.leaseMs ?? DEFAULT_LEASE_MS;

  const mappers = sqlRows(driver, now);
  const { str, optStr, num, toJson, toSettings, toLink, toLinkSummary, first, insertAudit } = mappers;

  const linkWhere = 'guild_id = $1 AND user_id = $2 AND identity = $3';
  const linkParams = (k: LinkKey) => [k.guildId, k.userId, k.identity];

  /** A guild's links (`columns` of them) by user id then identity; with `limit`, whole members per page. */
  function pageOfLinks(
    guildId: string,
    o: { afterUserId?: string; limit?: number },
    columns: string,
  ): Promise<Row[]> {
    const after = o.afterUserId ?? '';
    return o.limit === undefined
      ? driver.query(
          `SELECT ${columns} FROM links WHERE guild_id = $1 AND user_id > $2 ORDER BY user_id, identity`,
          [guildId, after],
        )
      : driver.query(
          `SELECT ${columns} FROM links WHERE guild_id = $1 AND user_id IN (
             SELECT DISTINCT user_id FROM links WHERE guild_id = $1 AND user_id > $2
             ORDER BY user_id LIMIT $3)
           ORDER BY user_id, identity`,
          [guildId, after, Math.max(0, Math.floor(o.limit))],
        );
  }

  /** A link stops proving: its holdings go, except an address another live link of the member resolves to. */
  async function forgetHoldings(tx: SqlExecutor, key: LinkKey, address: string | null): Promise<void> {
    const [other] = address
      ? await tx.query(
          `SELECT * FROM links WHERE guild_id = $1 AND user_id = $2 AND address = $3 AND identity <> $4
             AND released_at IS NULL ORDER BY proof_method DESC LIMIT 1`,
          [key.guildId, key.userId, address, key.identity],
        )
      : [];
    const keep = other ? toLink(other) : undefined;
    await releaseHoldings(
      tx,
      key.guildId,
      key.userId,
      key.identity,
      keep && { ...keep, since: keep.provenAt },
    );
  }

  /**
   * Claim the link's identity and address in the guild's registry, release the other members' links that
   * lost a subject to it, then save it: all in the caller's transaction.
   */
  async function writeLink(
    tx: SqlExecutor,
    link: LinkInput,
    reason: string,
    opts: { force: boolean; challengeIssuedAt?: number },
  ): Promise<{ link: LinkRecord; displaced: LinkRecord[] } | { refusal: HoldingRefusal }> {
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
        await forgetHoldings(tx, other, other.address);
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
    const [previous] = await tx.query(`SELECT address FROM links WHERE ${linkWhere}`, linkParams(link));
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

  return {
    ...createSqlRoleConnections(driver, now),
    ...createSqlSignedProofs(driver, now, leaseMs),
    ...createSqlHandoffs(driver, now, leaseMs),
    ...createSqlPendingLosses(driver, mappers),
    ...createSqlAuditEvents(driver, mappers),
    ...createSqlNonces(driver, now, mappers),
    ...createSqlVerifyPanels(driver, now),
    ...createSqlExemptions(driver, { now, rows: mappers }),
    ...createSqlRoleRules(driver, { now, rows: mappers }),
    ...createSqlDueChecks(driver),
    ...createSqlGuildAuthority(driver, { now, rows: mappers }),
    ...createSqlDashboard(driver, { now, leaseMs, rows: mappers }),
    ...createSqlFarcasterFlows(driver, now),
    ...createSqlGuildLeases(driver, now, leaseMs),

    async getGuildSettings(guildId) {
      const rows = await driver.query('SELECT * FROM guild_settings WHERE guild_id = $1', [guildId]);
      return first(rows, toSettings);
    },

    async saveGuildSettings(s: GuildSettingsInput, actor) {
      return driver.transaction(async (tx) => {
        const at = now();
        const rows = await tx.query(
          `INSERT INTO guild_settings (guild_id, enabled, human_role_id, spam_role_id, risky_role_id,
             min_score, spam_removes_human, log_channel_id, updated_at, min_account_age_days, min_join_age_days)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
           ON CONFLICT (guild_id) DO UPDATE SET
             enabled = excluded.enabled, human_role_id = excluded.human_role_id,
             spam_role_id = excluded.spam_role_id, risky_role_id = excluded.risky_role_id,
             min_score = excluded.min_score, spam_removes_human = excluded.spam_removes_human,
             log_channel_id = excluded.log_channel_id, updated_at = excluded.updated_at,
             min_account_age_days = excluded.min_account_age_days, min_join_age_days = excluded.min_join_age_days
           RETURNING *`,
          [
            s.guildId,
            s.enabled,
            s.humanRoleId,
            s.spamRoleId,
            s.riskyRoleId,
            s.minScore,
            s.spamRemovesHuman,
            s.logChannelId,
            at,
            s.minAccountAgeDays || null,
            s.minJoinAgeDays || null,
          ],
        );
        const saved = first(rows, toSettings);
        if (!saved) throw new Error('settings upsert returned no row');
        if (actor) {
          const { lastFullSyncAt: _sync, updatedAt: _updated, ...settings } = saved;
          await insertAudit(tx, {
            guildId: s.guildId,
            userId: actor.userId,
            kind: 'settings_changed',
            reason: actor.reason,
            details: settings,
            createdAt: at,
          });
        }
        return saved;
      });
    },

    async listGuildSettings(o = {}) {
      const rows = o.enabledOnly
        ? await driver.query('SELECT * FROM guild_settings WHERE enabled = $1 ORDER BY guild_id', [true])
        : await driver.query('SELECT * FROM guild_settings ORDER BY guild_id');
      return rows.map(toSettings);
    },

    async markFullSync(guildId, at) {
      await driver.query('UPDATE guild_settings SET last_full_sync_at = $2 WHERE guild_id = $1', [
        guildId,
        at,
      ]);
    },

    async saveLink(link: LinkInput, reason) {
      const written = await driver.transaction((tx) => writeLink(tx, link, reason, { force: true }));
      if ('refusal' in written) throw new Error('a forced link write was refused');
      return written.link;
    },

    async proveLink(link, reason, opts = {}) {
      return driver.transaction(async (tx) => {
        const written = await writeLink(tx, link, reason, { force: false, ...opts });
        if ('refusal' in written) return written;
        // The roles the proof decides are due now, for the prover and whoever lost a link to it.
        const members = new Set([link.userId, ...written.displaced.map((d) => d.userId)]);
        for (const userId of members)
          await dueNoLaterThan(tx, { guildId: link.guildId, userId, dueAt: link.provenAt });
        return written;
      });
    },

    async getHolding(scope, kind, subject) {
      const rows = await driver.query(
        'SELECT * FROM holdings WHERE scope = $1 AND kind = $2 AND subject = $3',
        [scope, kind, subject],
      );
      return first(rows, toHolding);
    },

    async removeLink(key, reason) {
      return driver.transaction(async (tx) => {
        const rows = await tx.query(
          `DELETE FROM links WHERE ${linkWhere} RETURNING proof_method, address`,
          linkParams(key),
        );
        const removed = rows[0];
        if (!removed) return false;
        await forgetHoldings(tx, key, optStr(removed.address));
        await insertAudit(tx, {
          guildId: key.guildId,
          userId: key.userId,
          kind: 'unlinked',
          reason,
          details: { identity: key.identity, proofMethod: str(removed.proof_method) },
        });
        return true;
      });
    },

    async releaseLink(key, reason) {
      return driver.transaction(async (tx) => {
        const rows = await tx.query(
          `UPDATE links SET released_at = $4 WHERE ${linkWhere} AND released_at IS NULL
           RETURNING proof_method, address`,
          [...linkParams(key), now()],
        );
        const released = rows[0];
        if (!released) return false;
        await forgetHoldings(tx, key, optStr(released.address));
        await insertAudit(tx, {
          guildId: key.guildId,
          userId: key.userId,
          kind: 'unlinked',
          reason,
          details: { identity: key.identity, proofMethod: str(released.proof_method), flagKept: true },
        });
        return true;
      });
    },

    async getLink(key) {
      return first(await driver.query(`SELECT * FROM links WHERE ${linkWhere}`, linkParams(key)), toLink);
    },

    async getUserLinks(guildId, userId) {
      const rows = await driver.query(
        'SELECT * FROM links WHERE guild_id = $1 AND user_id = $2 ORDER BY proven_at, identity',
        [guildId, userId],
      );
      return rows.map(toLink);
    },

    async getIdentityLinks(guildId, identity) {
      const rows = await driver.query(
        'SELECT * FROM links WHERE guild_id = $1 AND identity = $2 ORDER BY user_id',
        [guildId, identity],
      );
      return rows.map(toLink);
    },

    async getAddressLinks(guildId, address) {
      const rows = await driver.query(
        'SELECT * FROM links WHERE guild_id = $1 AND address = $2 ORDER BY user_id, identity',
        [guildId, address],
      );
      return rows.map(toLink);
    },

    async getLinksOfUser(userId) {
      const rows = await driver.query(
        'SELECT * FROM links WHERE user_id = $1 ORDER BY guild_id, proven_at, identity',
        [userId],
      );
      return rows.map(toLink);
    },

    async listLinks(guildId, o = {}) {
      return (await pageOfLinks(guildId, o, '*')).map(toLink);
    },

    async listLinkSummaries(guildId, o = {}) {
      return (await pageOfLinks(guildId, o, LINK_SUMMARY_COLUMNS)).map(toLinkSummary);
    },

    async countLinkedUsers(guildId) {
      const rows = await driver.query(
        'SELECT COUNT(DISTINCT user_id) AS n FROM links WHERE guild_id = $1 AND released_at IS NULL',
        [guildId],
      );
      return num(rows[0]?.n ?? 0);
    },

    async recordLinkCheck(key, check: LinkCheck) {
      const rows = check.ok
        ? await driver.query(
            `UPDATE links SET last_check_at = $4, last_check_ok = $5, last_result = $6
             WHERE ${linkWhere} RETURNING identity`,
            [...linkParams(key), check.at, true, toJson(check.result)],
          )
        : await driver.query(
            `UPDATE links SET last_check_at = $4, last_check_ok = $5 WHERE ${linkWhere} RETURNING identity`,
            [...linkParams(key), check.at, false],
          );
      return rows.length > 0;
    },

    ...createSqlRoleQueue(driver, { now, leaseMs, rows: mappers }),

    close: () => driver.close(),
  };
}
