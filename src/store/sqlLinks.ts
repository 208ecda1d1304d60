/** Proven links (`links`): reads, pages and check results, and the registry's holdings, merged into `createSqlStore`. */
import type { Row, SqlDriver } from './sql.ts';
import { toHolding } from './sqlHoldings.ts';
import type { SqlRows } from './sqlRows.ts';
import type { GatingStore, LinkCheck, LinkKey } from './types.ts';

/** Every column of `links` but `last_result` (a link's stored credentials, JSON). */
const LINK_SUMMARY_COLUMNS =
  'guild_id, user_id, identity, platform, address, proof_method, proven_at, last_check_at, last_check_ok, released_at';

/** One link by its key: the condition, with `linkParams` as its first three parameters. */
export const LINK_WHERE = 'guild_id = $1 AND user_id = $2 AND identity = $3';
export const linkParams = (k: LinkKey) => [k.guildId, k.userId, k.identity];

export type LinkReadStore = Pick<
  GatingStore,
  | 'getHolding'
  | 'getLink'
  | 'getUserLinks'
  | 'getIdentityLinks'
  | 'getAddressLinks'
  | 'getLinksOfUser'
  | 'listLinks'
  | 'listLinkSummaries'
  | 'countLinkedUsers'
  | 'recordLinkCheck'
>;

/** A guild's links (`columns` of them) by user id then identity; with `limit`, whole members per page. */
function pageOfLinks(
  driver: SqlDriver,
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

export function createSqlLinks(driver: SqlDriver, rows: SqlRows): LinkReadStore {
  const { num, toJson, toLink, toLinkSummary, first } = rows;
  return {
    async getHolding(scope, kind, subject) {
      const rows = await driver.query(
        'SELECT * FROM holdings WHERE scope = $1 AND kind = $2 AND subject = $3',
        [scope, kind, subject],
      );
      return first(rows, toHolding);
    },

    async getLink(key) {
      return first(await driver.query(`SELECT * FROM links WHERE ${LINK_WHERE}`, linkParams(key)), toLink);
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
      return (await pageOfLinks(driver, guildId, o, '*')).map(toLink);
    },

    async listLinkSummaries(guildId, o = {}) {
      return (await pageOfLinks(driver, guildId, o, LINK_SUMMARY_COLUMNS)).map(toLinkSummary);
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
            `UPDATE links SET last_check_at = $4, last_check_ok = $5, last_result = $6, last_check_not_found = $7
             WHERE ${LINK_WHERE} RETURNING identity`,
            [...linkParams(key), check.at, true, toJson(check.result), check.notFound === true],
          )
        : await driver.query(
            `UPDATE links SET last_check_at = $4, last_check_ok = $5 WHERE ${LINK_WHERE} RETURNING identity`,
            [...linkParams(key), check.at, false],
          );
      return rows.length > 0;
    },
  };
}
