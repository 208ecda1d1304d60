/**
 * How rows of the gating tables become records, for both dialects: column conversions, one mapper per
 * table, and the audit insert every write shares.
 */
import type { CredentialSet } from '../web3bio/types.ts';
import { AUDIT_METRIC_SQL, DAY_MS } from './auditMetric.ts';
import { type Row, type SqlDriver, type SqlExecutor, toStorableJson } from './sql.ts';
import type {
  AuditEvent,
  AuditEventInput,
  GuildSettings,
  JsonValue,
  LinkRecord,
  LinkSummary,
  NonceRecord,
  PendingLoss,
  ProofMethod,
  RoleChange,
  RoleChangeStatus,
  RoleOp,
} from './types.ts';

/**
 * What an event adds to its daily count: one, except a breaker hold, which counts the removals it held
 * (`details.count`).
 */
export function auditWeight(event: Pick<AuditEvent, 'kind' | 'details'>): number {
  if (event.kind !== 'removals_held') return 1;
  const details = event.details;
  const count =
    typeof details === 'object' && details !== null && !Array.isArray(details) ? details.count : undefined;
  return typeof count === 'number' && Number.isInteger(count) && count > 0 ? count : 1;
}

/** Column conversions and the mappers of tables without a JSON column: the same for both dialects. */
const str = (v: unknown): string => String(v);
const optStr = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));
const num = (v: unknown): number => Number(v);
const optNum = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));
const optBool = (v: unknown): boolean | null => (v === null || v === undefined ? null : Boolean(v));
const toJson = toStorableJson;

const toSettings = (r: Row): GuildSettings => ({
  guildId: str(r.guild_id),
  enabled: Boolean(r.enabled),
  humanRoleId: str(r.human_role_id),
  spamRoleId: optStr(r.spam_role_id),
  riskyRoleId: optStr(r.risky_role_id),
  minScore: optNum(r.min_score),
  spamRemovesHuman: Boolean(r.spam_removes_human),
  minAccountAgeDays: optNum(r.min_account_age_days),
  minJoinAgeDays: optNum(r.min_join_age_days),
  logChannelId: optStr(r.log_channel_id),
  lastFullSyncAt: optNum(r.last_full_sync_at),
  updatedAt: num(r.updated_at),
});

const toLinkSummary = (r: Row): LinkSummary => ({
  guildId: str(r.guild_id),
  userId: str(r.user_id),
  identity: str(r.identity),
  platform: str(r.platform),
  address: optStr(r.address),
  proofMethod: str(r.proof_method) as ProofMethod,
  provenAt: num(r.proven_at),
  lastCheckAt: optNum(r.last_check_at),
  lastCheckOk: optBool(r.last_check_ok),
  releasedAt: optNum(r.released_at),
});

const toLoss = (r: Row): PendingLoss => ({
  guildId: str(r.guild_id),
  userId: str(r.user_id),
  subject: str(r.subject),
  firstSeenAt: num(r.first_seen_at),
  reason: str(r.reason),
  heldAt: optNum(r.held_at),
});

const toNonce = (r: Row): NonceRecord => ({
  nonce: str(r.nonce),
  guildId: str(r.guild_id),
  userId: str(r.user_id),
  userName: optStr(r.user_name),
  guildName: optStr(r.guild_name),
  identity: str(r.identity),
  address: str(r.address),
  expiresAt: num(r.expires_at),
  usedAt: optNum(r.used_at),
  failedAttempts: num(r.failed_attempts ?? 0),
});

const toChange = (r: Row): RoleChange => ({
  id: num(r.id),
  guildId: str(r.guild_id),
  userId: str(r.user_id),
  roleId: str(r.role_id),
  op: str(r.op) as RoleOp,
  reason: str(r.reason),
  status: str(r.status) as RoleChangeStatus,
  attempts: num(r.attempts),
  leaseUntil: optNum(r.lease_until),
  claimToken: optStr(r.claim_token),
  notBefore: optNum(r.not_before),
  detail: optStr(r.detail),
  createdAt: num(r.created_at),
  updatedAt: num(r.updated_at),
});

const first = <T>(rows: Row[], map: (r: Row) => T): T | undefined => {
  const row = rows[0];
  return row ? map(row) : undefined;
};

/**
 * The row mappers and audit writer of one driver: the conversions above, with those that read a JSON
 * column the way the driver hands it back (parsed jsonb or text).
 */
export function sqlRows(driver: SqlDriver, now: () => number) {
  const { dialect } = driver;
  const fromJson = (v: unknown): unknown => {
    if (v === null || v === undefined) return null;
    return dialect.parsesJson ? v : JSON.parse(String(v));
  };

  const toLink = (r: Row): LinkRecord => ({
    ...toLinkSummary(r),
    lastResult: fromJson(r.last_result) as CredentialSet | null,
  });

  const toAudit = (r: Row): AuditEvent => ({
    id: num(r.id),
    guildId: str(r.guild_id),
    userId: optStr(r.user_id),
    kind: str(r.kind),
    roleId: optStr(r.role_id),
    reason: str(r.reason),
    details: fromJson(r.details) as JsonValue | null,
    createdAt: num(r.created_at),
  });

  async function insertAudit(db: SqlExecutor, e: AuditEventInput): Promise<AuditEvent> {
    const rows = await db.query(
      `INSERT INTO audit_events (guild_id, user_id, kind, role_id, reason, details, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
      [
        e.guildId,
        e.userId ?? null,
        e.kind,
        e.roleId ?? null,
        e.reason,
        toJson(e.details),
        e.createdAt ?? now(),
      ],
    );
    const event = first(rows, toAudit);
    if (!event) throw new Error('audit insert returned no row');
    // The dashboard's charts read these daily counts, never the events themselves.
    await db.query(
      `INSERT INTO audit_daily (guild_id, metric, day, count)
       SELECT e.guild_id, ${AUDIT_METRIC_SQL}, e.created_at / ${DAY_MS}, $2 FROM audit_events e WHERE e.id = $1
       ON CONFLICT (guild_id, metric, day) DO UPDATE SET count = audit_daily.count + excluded.count`,
      [event.id, auditWeight(event)],
    );
    return event;
  }

  return {
    str,
    optStr,
    num,
    optNum,
    optBool,
    fromJson,
    toJson,
    toSettings,
    toLink,
    toLinkSummary,
    toLoss,
    toAudit,
    toNonce,
    toChange,
    first,
    insertAudit,
  };
}

export type SqlRows = ReturnType<typeof sqlRows>;
