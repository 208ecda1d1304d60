/**
 * Discord calls as one Linked Roles member, with the tokens kept sealed in their connection: the access
 * token is refreshed when it nears its expiry, and once more when Discord refuses it (a 401) while the
 * refresh token still works. Only a refused refresh marks the connection stale.
 */

import {
  type DiscordOAuthConfig,
  DiscordOAuthError,
  refreshGrant,
  type TokenGrant,
} from '../../discord/oauth.ts';
import type { Logger } from '../../ops/log.ts';
import type { RoleConnectionRecord, RoleConnectionStore } from '../../store/types.ts';
import { openToken, sealToken } from './linkedRoles.ts';

/** Refresh the access token when it has less than this left (re-checks run at most a day apart by default). */
export const REFRESH_MARGIN_MS = 2 * 86_400_000;

/** Why a call as the member did not happen: Discord refused the refresh token, or failed otherwise. */
export type MemberCallFailure = 'stale' | 'discord_failed';

export interface MemberTokenOptions {
  store: Pick<RoleConnectionStore, 'updateRoleConnectionTokens' | 'markRoleConnectionStale'>;
  oauth: DiscordOAuthConfig;
  /** TOKEN_ENCRYPTION_KEY as bytes. */
  key: Buffer;
  logger: Pick<Logger, 'warn'>;
  now: () => number;
}

/** One member's calls during one pass (a proof or a re-check): at most one refresh between them. */
export class MemberTokens {
  readonly #o: MemberTokenOptions;
  readonly #record: RoleConnectionRecord;
  #token: string | undefined;
  #refreshed = false;

  /** `accessToken`: one just granted (a fresh sign-in), used before the stored one. */
  constructor(options: MemberTokenOptions, record: RoleConnectionRecord, accessToken?: string) {
    this.#o = options;
    this.#record = record;
    this.#token = accessToken;
  }

  /**
   * Makes sure a token is at hand (refreshed when near its expiry), so a re-check with nothing to write
   * still keeps the tokens fresh and notices a deauthorized app. Undefined when it is.
   */
  async ready(): Promise<MemberCallFailure | undefined> {
    const token = this.#token ?? (await this.#stored());
    return token === 'stale' || token === 'discord_failed' ? token : undefined;
  }

  /** Runs `call` with a working access token; a 401 refreshes the token once and runs it again. */
  async call<T>(call: (accessToken: string) => Promise<T>): Promise<{ value: T } | MemberCallFailure> {
    const token = this.#token ?? (await this.#stored());
    if (token === 'stale' || token === 'discord_failed') return token;
    try {
      return { value: await call(token) };
    } catch (error) {
      if (this.#refreshed || !(error instanceof DiscordOAuthError) || error.status !== 401)
        return this.#failed(error);
    }
    const renewed = await this.#refresh();
    if (renewed === 'stale' || renewed === 'discord_failed') return renewed;
    try {
      return { value: await call(renewed) };
    } catch (error) {
      return this.#failed(error);
    }
  }

  /** The stored access token, refreshed first when it is near its expiry (or unreadable). */
  async #stored(): Promise<string | MemberCallFailure> {
    const { userId, sealedAccessToken, accessExpiresAt } = this.#record;
    const access = sealedAccessToken === null ? undefined : openToken(this.#o.key, sealedAccessToken, userId);
    if (access !== undefined && accessExpiresAt - this.#o.now() > REFRESH_MARGIN_MS) {
      this.#token = access;
      return access;
    }
    return this.#refresh();
  }

  async #refresh(): Promise<string | MemberCallFailure> {
    const { userId, sealedRefreshToken } = this.#record;
    this.#refreshed = true;
    const refresh =
      sealedRefreshToken === null ? undefined : openToken(this.#o.key, sealedRefreshToken, userId);
    if (refresh === undefined) return this.#stale('no usable refresh token');
    let grant: TokenGrant;
    try {
      grant = await refreshGrant(this.#o.oauth, { refreshToken: refresh, needs: ['role_connections.write'] });
    } catch (error) {
      const refused =
        error instanceof DiscordOAuthError && (error.kind === 'invalid_grant' || error.kind === 'scope');
      return refused ? this.#stale(error.message) : this.#failed(error);
    }
    await this.#o.store.updateRoleConnectionTokens(userId, {
      sealedAccessToken: sealToken(this.#o.key, grant.accessToken, userId),
      sealedRefreshToken:
        grant.refreshToken === null ? sealedRefreshToken : sealToken(this.#o.key, grant.refreshToken, userId),
      accessExpiresAt: this.#o.now() + grant.expiresIn * 1_000,
    });
    this.#token = grant.accessToken;
    return grant.accessToken;
  }

  #failed(error: unknown): 'discord_failed' {
    this.#o.logger.warn(
      {
        userId: this.#record.userId,
        err: error instanceof Error ? { name: error.name, message: error.message } : String(error),
      },
      'linked role call to Discord failed; trying again at the next re-check',
    );
    return 'discord_failed';
  }

  async #stale(why: string): Promise<'stale'> {
    await this.#o.store.markRoleConnectionStale(this.#record.userId, this.#o.now());
    this.#o.logger.warn(
      { userId: this.#record.userId, why },
      'linked role connection stale: Discord refused the token',
    );
    return 'stale';
  }
}
