/**
 * Linked Roles building blocks: the role-connection metadata the app registers, the metadata values a
 * member's proven identities earn, the Discord calls that register and write them, and AES-256-GCM
 * sealing of the refresh tokens kept for later updates.
 * @see https://discord.com/developers/docs/tutorials/configuring-app-metadata-for-linked-roles
 */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import {
  type APIApplicationRoleConnectionMetadata,
  ApplicationRoleConnectionMetadataType,
} from 'discord-api-types/v10';
import { callAsUser, type DiscordOAuthConfig } from '../../discord/oauth.ts';
import { described, named } from '../../i18n/index.ts';
import type { HeldFlag } from '../../store/types.ts';
import { credentialIsTrue, credentialScore, isCredentialExpired } from '../../web3bio/credentials.ts';
import type { Credential } from '../../web3bio/types.ts';
import { carriesFlag, type IdentityEvidence } from '../rules/rules.ts';

/** The metadata keys, in the order Discord lists them. */
const METADATA_KEYS = ['likely_human', 'humanity_score', 'not_spam', 'not_risky', 'verified_days'] as const;
const METADATA_TYPES: Record<(typeof METADATA_KEYS)[number], ApplicationRoleConnectionMetadataType> = {
  likely_human: ApplicationRoleConnectionMetadataType.BooleanEqual,
  humanity_score: ApplicationRoleConnectionMetadataType.IntegerGreaterThanOrEqual,
  not_spam: ApplicationRoleConnectionMetadataType.BooleanEqual,
  not_risky: ApplicationRoleConnectionMetadataType.BooleanEqual,
  verified_days: ApplicationRoleConnectionMetadataType.DatetimeLessThanOrEqual,
};

/**
 * Shown in each server's role settings, in the admin's language: names and descriptions an admin
 * understands there (`name_localizations` and `description_localizations` from the catalogs).
 */
export const ROLE_CONNECTION_METADATA: APIApplicationRoleConnectionMetadata[] = METADATA_KEYS.map((key) => {
  const name = `gating.linkedRoles.metadata.${key}.name` as const;
  const description = `gating.linkedRoles.metadata.${key}.description` as const;
  return {
    key,
    ...named(name),
    ...described(description),
    type: METADATA_TYPES[key],
  };
});

/** The body of `PUT /users/@me/applications/{id}/role-connection`. */
export interface RoleConnection {
  platform_name: 'Web3.bio';
  /** The proven identity; null once the connection proves nothing (its identity moved away). */
  platform_username: string | null;
  /** Discord takes every value as a string: integers, ISO 8601 dates, "1"/"0" for booleans. */
  metadata: Record<string, string>;
}

/**
 * The metadata a member's proven identity earns now, or null when a lookup failed: like roles, a
 * connection is never downgraded on a failure (the caller keeps what Discord holds). Identities the
 * account proved before and that may carry a flag (`held`) add their flags only, and `keptFlags` count
 * as flags no answer shows (a held identity Web3.bio no longer finds). A connection that proves nothing
 * now (`username` null, no `evidence`: its identity moved away) earns no humanity and no verified date.
 */
export function roleConnectionFor(input: {
  username: string | null;
  evidence: IdentityEvidence[];
  held?: IdentityEvidence[];
  keptFlags?: HeldFlag[];
  firstProvenAt: number;
  nowSec: number;
}): RoleConnection | null {
  const held = (input.held ?? []).map((e) =>
    e.credentials === null ? e : { ...e, credentials: { ...e.credentials, isHuman: [] } },
  );
  const all = [...input.evidence, ...held];
  if (all.some((e) => e.credentials === null)) return null;
  const sets = all.flatMap((e) => (e.credentials ? [e.credentials] : []));
  const live = (list: Credential[]) => list.filter((c) => !isCredentialExpired(c, input.nowSec));
  const human = sets.flatMap((s) => live(s.isHuman));
  const scores = human.map(credentialScore).filter((s): s is number => s !== null && Number.isFinite(s));
  const flagged = (category: HeldFlag) =>
    (input.keptFlags ?? []).includes(category) ||
    sets.some((s) =>
      carriesFlag({ isHuman: [], isRisky: [], isSpam: [], [category]: s[category] }, input.nowSec),
    );
  const metadata: Record<string, string> = {
    likely_human: human.some(credentialIsTrue) ? '1' : '0',
    humanity_score: String(Math.max(0, Math.floor(Math.max(0, ...scores)))),
    not_spam: flagged('isSpam') ? '0' : '1',
    not_risky: flagged('isRisky') ? '0' : '1',
  };
  if (input.username !== null) metadata.verified_days = new Date(input.firstProvenAt).toISOString();
  return {
    platform_name: 'Web3.bio',
    platform_username: input.username === null ? null : input.username.slice(0, 100),
    metadata,
  };
}

/**
 * Writes (or, with empty metadata, clears) the member's role connection with their access token.
 * @see https://discord.com/developers/docs/resources/user#update-current-user-application-role-connection
 */
export async function putRoleConnection(
  cfg: DiscordOAuthConfig,
  accessToken: string,
  connection:
    | RoleConnection
    | { platform_name: null; platform_username: null; metadata: Record<string, never> },
): Promise<void> {
  await callAsUser(cfg, {
    method: 'PUT',
    route: `/users/@me/applications/${cfg.clientId}/role-connection`,
    accessToken,
    body: connection,
  });
}

const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const SEALED_PREFIX = 'v1.';

/** TOKEN_ENCRYPTION_KEY as 32 bytes: 64 hex characters or base64 of 32 bytes; undefined when it is neither. */
export function parseEncryptionKey(text: string): Buffer | undefined {
  const trimmed = text.trim();
  const bytes = /^[0-9a-fA-F]{64}$/.test(trimmed)
    ? Buffer.from(trimmed, 'hex')
    : /^[A-Za-z0-9+/_-]{43}=?$/.test(trimmed)
      ? Buffer.from(trimmed, trimmed.includes('-') || trimmed.includes('_') ? 'base64url' : 'base64')
      : undefined;
  return bytes?.length === KEY_BYTES ? bytes : undefined;
}

/** Seals a token with AES-256-GCM (random IV; `context`, e.g. the user id, bound as associated data). */
export function sealToken(key: Buffer, token: string, context: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(context));
  const body = Buffer.concat([cipher.update(token, 'utf8'), cipher.final()]);
  return `${SEALED_PREFIX}${Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url')}`;
}

/** Opens a sealed token; undefined when the key, the context or the bytes do not match. */
export function openToken(key: Buffer, sealed: string, context: string): string | undefined {
  if (!sealed.startsWith(SEALED_PREFIX)) return undefined;
  const raw = Buffer.from(sealed.slice(SEALED_PREFIX.length), 'base64url');
  if (raw.length < IV_BYTES + TAG_BYTES) return undefined;
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES));
    decipher.setAAD(Buffer.from(context));
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES));
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString(
      'utf8',
    );
  } catch {
    return undefined;
  }
}
