import { REST, Routes } from 'discord.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type FakeDiscord, startFakeDiscord } from '../../fakes/discord/server.ts';
import {
  authorizeUrl,
  type DiscordOAuthConfig,
  DiscordOAuthError,
  exchangeCode,
  newOAuthState,
} from '../../src/discord/oauth.ts';
import {
  openToken,
  parseEncryptionKey,
  putRoleConnection,
  ROLE_CONNECTION_METADATA,
  roleConnectionFor,
  sealToken,
} from '../../src/gating/linkedRoles/linkedRoles.ts';
import type { Credential, CredentialCategory } from '../../src/web3bio/types.ts';

const NOW_SEC = 1_800_000_000;
const USER = '444444444444444444';

function credential(
  category: CredentialCategory,
  value: string,
  type = 'boolean',
  expiredAt: number | null = null,
): Credential {
  return {
    id: `${category},${value}`,
    platform: 'humanpassport',
    category,
    source: 'test',
    type,
    value,
    label: 'Test',
    description: 'test credential',
    link: null,
    updatedAt: NOW_SEC - 100,
    expiredAt,
  };
}

describe('role-connection metadata values', () => {
  const base = { username: 'vitalik.eth', firstProvenAt: Date.UTC(2026, 0, 2), nowSec: NOW_SEC };

  it('sums up the proven identities: human, best score, no flags, first proof date', () => {
    const connection = roleConnectionFor({
      ...base,
      evidence: [
        {
          identity: 'a.eth',
          credentials: { isHuman: [credential('isHuman', 'true')], isRisky: [], isSpam: [] },
        },
        {
          identity: 'b.eth',
          credentials: { isHuman: [credential('isHuman', '32.7', 'score')], isRisky: [], isSpam: [] },
        },
      ],
    });
    expect(connection).toEqual({
      platform_name: 'Web3.bio',
      platform_username: 'vitalik.eth',
      metadata: {
        likely_human: '1',
        humanity_score: '32',
        not_spam: '1',
        not_risky: '1',
        verified_days: '2026-01-02T00:00:00.000Z',
      },
    });
  });

  it('marks flags, ignores expired credentials, and says nothing when a lookup failed', () => {
    const flagged = roleConnectionFor({
      ...base,
      evidence: [
        {
          identity: 'a.eth',
          credentials: {
            isHuman: [credential('isHuman', 'true', 'boolean', NOW_SEC - 1)],
            isRisky: [],
            isSpam: [credential('isSpam', 'true')],
          },
        },
      ],
    });
    expect(flagged?.metadata).toMatchObject({
      likely_human: '0',
      humanity_score: '0',
      not_spam: '0',
      not_risky: '1',
    });
    expect(roleConnectionFor({ ...base, evidence: [{ identity: 'a.eth', credentials: null }] })).toBeNull();
  });

  it('counts only the flags of held identities, flags kept without an answer, and nothing for a connection that proves nothing', () => {
    const clean = {
      identity: 'clean.eth',
      credentials: { isHuman: [credential('isHuman', 'true')], isRisky: [], isSpam: [] },
    };
    const heldHuman = {
      identity: 'old.eth',
      credentials: {
        isHuman: [credential('isHuman', '50', 'score')],
        isRisky: [credential('isRisky', 'true')],
        isSpam: [],
      },
    };
    expect(roleConnectionFor({ ...base, evidence: [clean], held: [heldHuman] })?.metadata).toMatchObject({
      likely_human: '1',
      humanity_score: '0',
      not_spam: '1',
      not_risky: '0',
    });
    expect(roleConnectionFor({ ...base, evidence: [clean], keptFlags: ['isSpam'] })?.metadata).toMatchObject({
      not_spam: '0',
      not_risky: '1',
    });
    expect(
      roleConnectionFor({ ...base, evidence: [clean], held: [{ identity: 'old.eth', credentials: null }] }),
    ).toBeNull();
    expect(roleConnectionFor({ ...base, username: null, evidence: [], held: [heldHuman] })).toEqual({
      platform_name: 'Web3.bio',
      platform_username: null,
      metadata: { likely_human: '0', humanity_score: '0', not_spam: '1', not_risky: '0' },
    });
  });

  it('declares at most 5 records with keys Discord accepts', () => {
    expect(ROLE_CONNECTION_METADATA.length).toBeLessThanOrEqual(5);
    for (const m of ROLE_CONNECTION_METADATA) expect(m.key).toMatch(/^[a-z0-9_]{1,50}$/);
  });
});

describe('role connections against the stand-in Discord', () => {
  let discord: FakeDiscord;
  let cfg: DiscordOAuthConfig;
  const PUBLIC = 'https://bot.example.org';

  beforeEach(async () => {
    discord = await startFakeDiscord({ clientSecret: 'linked-roles-secret' });
    discord.addUser({ id: USER, username: 'alice' });
    discord.oauth.allowRedirect(`${PUBLIC}/linked-role/callback`);
    discord.oauth.signInAs(USER);
    cfg = {
      clientId: discord.applicationId,
      clientSecret: 'linked-roles-secret',
      apiUrl: discord.apiUrl,
      publicUrl: PUBLIC,
    };
  });
  afterEach(async () => {
    await discord.close();
  });

  async function tokenWith(scopes: ('identify' | 'role_connections.write')[]): Promise<string> {
    const url = authorizeUrl(cfg, {
      scopes,
      state: newOAuthState().state,
      redirectPath: '/linked-role/callback',
    });
    const back = (await fetch(url, { redirect: 'manual' })).headers.get('location') ?? '';
    const code = new URL(back).searchParams.get('code') ?? '';
    return (await exchangeCode(cfg, { code, redirectPath: '/linked-role/callback', needs: scopes }))
      .accessToken;
  }

  it('registers the metadata with the bot token, and writes a connection with the member token', async () => {
    const rest = new REST({ api: discord.apiUrl }).setToken(discord.token);
    await rest.put(Routes.applicationRoleConnectionMetadata(discord.applicationId), {
      body: ROLE_CONNECTION_METADATA,
    });
    expect(discord.oauth.roleConnectionMetadata.map((m) => m.key)).toEqual(
      ROLE_CONNECTION_METADATA.map((m) => m.key),
    );

    const connection = roleConnectionFor({
      username: 'vitalik.eth',
      firstProvenAt: Date.UTC(2026, 0, 2),
      nowSec: NOW_SEC,
      evidence: [
        {
          identity: 'vitalik.eth',
          credentials: { isHuman: [credential('isHuman', 'true')], isRisky: [], isSpam: [] },
        },
      ],
    });
    if (!connection) throw new Error('no connection');
    const token = await tokenWith(['identify', 'role_connections.write']);
    await putRoleConnection(cfg, token, connection);
    expect(discord.oauth.roleConnections.get(USER)).toEqual(connection);

    await putRoleConnection(cfg, token, { platform_name: null, platform_username: null, metadata: {} });
    expect(discord.oauth.roleConnections.get(USER)?.metadata).toEqual({});
  });

  it('refuses a token without role_connections.write, and metadata keys that were never registered', async () => {
    const identifyOnly = await tokenWith(['identify']);
    const denied = await putRoleConnection(cfg, identifyOnly, {
      platform_name: 'Web3.bio',
      platform_username: 'x',
      metadata: {},
    }).catch((e: unknown) => e);
    expect(denied).toBeInstanceOf(DiscordOAuthError);
    expect((denied as DiscordOAuthError).status).toBe(403);

    const token = await tokenWith(['identify', 'role_connections.write']);
    const unknown = await putRoleConnection(cfg, token, {
      platform_name: 'Web3.bio',
      platform_username: 'x',
      metadata: { likely_human: '1' },
    }).catch((e: unknown) => e);
    expect((unknown as DiscordOAuthError).status).toBe(400);
    expect(discord.oauth.roleConnections.has(USER)).toBe(false);
  });

  it('refuses metadata Discord would refuse: more than 5 records, or a bad key', async () => {
    const rest = new REST({ api: discord.apiUrl }).setToken(discord.token);
    const route = Routes.applicationRoleConnectionMetadata(discord.applicationId);
    const six = [...ROLE_CONNECTION_METADATA, { ...ROLE_CONNECTION_METADATA[0], key: 'extra' }];
    await expect(rest.put(route, { body: six })).rejects.toThrow(/Invalid Form Body/);
    await expect(
      rest.put(route, { body: [{ ...ROLE_CONNECTION_METADATA[0], key: 'Bad Key' }] }),
    ).rejects.toThrow(/Invalid Form Body/);
  });
});

describe('refresh tokens sealed at rest (AES-256-GCM)', () => {
  const key = parseEncryptionKey('0f'.repeat(32));
  if (!key) throw new Error('key');

  it('reads a key as 64 hex characters or base64 of 32 bytes, and nothing else', () => {
    expect(parseEncryptionKey(Buffer.alloc(32, 7).toString('base64'))?.length).toBe(32);
    expect(parseEncryptionKey(Buffer.alloc(32, 7).toString('base64url'))?.length).toBe(32);
    expect(parseEncryptionKey('0f'.repeat(16))).toBeUndefined();
    expect(parseEncryptionKey('correct horse battery staple')).toBeUndefined();
  });

  it('opens only with the same key and context, never shows the token, and detects tampering', () => {
    const sealed = sealToken(key, 'refresh-token-secret', USER);
    expect(sealed).not.toContain('refresh-token-secret');
    expect(sealToken(key, 'refresh-token-secret', USER)).not.toBe(sealed);
    expect(openToken(key, sealed, USER)).toBe('refresh-token-secret');
    expect(openToken(key, sealed, '555555555555555555')).toBeUndefined();
    expect(openToken(Buffer.alloc(32, 1), sealed, USER)).toBeUndefined();
    const prefix = sealed.slice(0, sealed.indexOf('.') + 1);
    const raw = Buffer.from(sealed.slice(prefix.length), 'base64url');
    for (const at of [0, 12, raw.length - 1]) {
      const tampered = Buffer.from(raw);
      tampered[at] = (tampered[at] ?? 0) ^ 0x01;
      expect(openToken(key, `${prefix}${tampered.toString('base64url')}`, USER)).toBeUndefined();
    }
    expect(openToken(key, 'v0.garbage', USER)).toBeUndefined();
  });
});
