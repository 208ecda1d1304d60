/**
 * Proving identities: `/verify` (the identity's own record read fresh, or a one-time signing link for
 * its Ethereum address), the signing page's completed signature, and `/unverify`. Nothing is stored
 * when a lookup fails.
 */
import type { Client } from 'discord.js';
import type { Logger } from '../../ops/log.ts';
import type { AccountProof, GatingStore, NonceRecord } from '../../store/types.ts';
import { InvalidIdentityError } from '../../web3bio/errors.ts';
import { type ParsedIdentity, parseIdentity } from '../../web3bio/identity.ts';
import type { IdentityKind } from '../../web3bio/identityKind.ts';
import { guildOf, servesGuild } from '../roles/discordReads.ts';
import { EMPTY_DIFF, type MemberGating } from '../roles/memberGating.ts';
import type { RoleWorker } from '../roles/roleWorker.ts';
import type { Evaluator } from '../rules/evaluation.ts';
import { type RecordRead, resolvedAddressOf, signerAddressOf } from '../rules/recordReads.ts';
import type { MemberSync, SignatureLinkResult, VerifyRefusal, VerifyResult } from '../types.ts';
import { accountProofsOf, accountSubjectOf, proofOfAny, rememberAccountProof } from './accountProofs.ts';
import { bringProof } from './bringProof.ts';
import { DEFAULT_CHALLENGE_TTL_MS, type SiweConfig } from './challengeMessage.ts';
import { createFarcasterFlow, fidIdentity, fidOf } from './farcasterSignIn.ts';
import { clearDueCheck, type LinkBook } from './linkBook.ts';
import { ProofCarrier } from './proofCarrier.ts';
import { recordNamesDiscordUser } from './recordProof.ts';
import { createChallenge, signedIdentity } from './siwe.ts';

export interface VerificationOptions {
  store: GatingStore;
  discord: Client;
  logger: Logger;
  siwe: SiweConfig;
  now: () => number;
  evaluator: Evaluator;
  links: LinkBook;
  members: MemberGating;
  worker: RoleWorker;
  /** Sign in with Farcaster is configured (FARCASTER_RELAY_URL and OPTIMISM_RPC_URL): offer it. */
  farcaster?: boolean;
}

/** Links a member to the identities they prove, and unlinks them on request. */
export class Verification {
  readonly #store: GatingStore;
  readonly #discord: Client;
  readonly #logger: Logger;
  readonly #siwe: SiweConfig;
  readonly #now: () => number;
  readonly #evaluator: Evaluator;
  readonly #links: LinkBook;
  readonly #members: MemberGating;
  readonly #worker: RoleWorker;
  readonly #farcaster: boolean;
  /** The member's proofs by signature across servers: bring, share, remove everywhere. */
  readonly carrier: ProofCarrier;

  constructor(options: VerificationOptions) {
    this.#store = options.store;
    this.#discord = options.discord;
    this.#logger = options.logger;
    this.#siwe = options.siwe;
    this.#now = options.now;
    this.#evaluator = options.evaluator;
    this.#links = options.links;
    this.#members = options.members;
    this.#worker = options.worker;
    this.#farcaster = options.farcaster === true;
    this.carrier = new ProofCarrier({ ...options, verification: this });
    // A member who shares their proofs brings them to a server they join; the join syncs them next.
    options.members.onJoining((guildId, userId) =>
      this.carrier.bringShared(guildId, userId, { sync: false }).catch((error: unknown) => {
        // The join's own sync still runs: what the member linked here before still counts.
        this.#logger.warn({ err: error, guildId, userId }, 'bringing shared proofs on join failed');
      }),
    );
  }

  /**
   * Start proving an identity: linked at once when its own record (read fresh) names the member,
   * otherwise a one-time signing link for its Ethereum address. Nothing is stored when a lookup fails.
   */
  async verify(
    guildId: string,
    user: { id: string; username: string },
    identityInput: string,
  ): Promise<VerifyResult> {
    let parsed: ParsedIdentity;
    try {
      parsed = parseIdentity(identityInput);
    } catch (error) {
      if (error instanceof InvalidIdentityError)
        return refused({ code: 'invalid_identity', reason: error.reason });
      throw error;
    }
    const settings = await this.#store.getGuildSettings(guildId);
    if (!settings?.enabled) return refused({ code: 'not_enabled' });
    const capped = await this.#links.capRefusal(guildId, user.id, parsed.identity);
    if (capped) return refused(capped);

    const name = parsed.identity;
    const target = { identity: name, platform: String(parsed.platform) };
    if (parsed.kind === 'evm-address' || parsed.kind === 'solana-address')
      return (
        (await this.#bringIfProven(guildId, user.id, target, [name])) ??
        this.#challenge(guildId, user, name, name)
      );

    const read = await this.#evaluator.readRecord(parsed, true);
    if (read.failed) return refused({ code: 'lookup_failed', identity: name });
    const fid = FARCASTER_KINDS.has(parsed.kind) ? farcasterFidOf(read, parsed) : null;
    // Proven before by this account's signature (the wallet the record names now, or its FID): no new link.
    const brought = await this.#bringIfProven(guildId, user.id, target, [
      signerAddressOf(read),
      fid === null ? null : fidIdentity(fid),
    ]);
    if (brought) return brought;
    if (recordNamesDiscordUser(read, user)) {
      const linked = await this.#links.save(
        {
          guildId,
          userId: user.id,
          identity: name,
          platform: String(parsed.platform),
          address: resolvedAddressOf(read),
          proofMethod: 'record',
          provenAt: this.#now(),
          // A Farcaster name's record claims its FID too: one Farcaster account, one member.
          ...(fid === null ? {} : { aliases: [fidIdentity(fid)] }),
        },
        `the discord record of ${name} names ${user.username}`,
      );
      if ('refusal' in linked) return refused(linked.refusal);
      const synced = await this.#syncAfterLink(guildId, user.id, linked.link.provenAt);
      return {
        kind: 'linked',
        link: linked.link,
        diff: synced.applied,
        moved: linked.moved,
        blockedRoleIds: this.#worker.blockedRoles(guildId),
        ...(synced.notBefore ? { notBefore: synced.notBefore } : {}),
        ...(synced.rolesLater ? { rolesLater: true } : {}),
      };
    }
    if (read.profiles.length === 0 && read.domain === null)
      return refused({ code: 'not_found', identity: name });
    if (fid !== null && this.#farcaster) return this.#farcasterFlow(guildId, user, name, fid);
    const address = signerAddressOf(read);
    if (!address) return refused({ code: 'no_address', identity: name, username: user.username });
    const challenge = await this.#challenge(guildId, user, name, address);
    return fid !== null && challenge.kind === 'challenge'
      ? { ...challenge, farcasterUnconfigured: true }
      : challenge;
  }

  /** A Sign in with Farcaster flow for the identity's FID (the link cap counted on the FID). */
  async #farcasterFlow(
    guildId: string,
    user: { id: string; username: string },
    identity: string,
    fid: number,
  ): Promise<VerifyResult> {
    const capped = await this.#links.capRefusal(guildId, user.id, fidIdentity(fid));
    if (capped) return refused(capped);
    const guild = await guildOf(this.#discord, guildId);
    const flow = await createFarcasterFlow(this.#store, this.#siwe, {
      guildId,
      userId: user.id,
      userName: user.username || null,
      guildName: guild?.name ?? null,
      identity,
      fid,
    });
    return { kind: 'farcaster', url: flow.url, expiresAt: flow.expiresAt, fid };
  }

  /** The verify server's onVerified: store the signature link (the link cap checked again), then sync. */
  async completeSignature(result: { record: NonceRecord; address: string }): Promise<SignatureLinkResult> {
    const { record } = result;
    const settings = await this.#store.getGuildSettings(record.guildId);
    if (!settings?.enabled) return { ok: false, refusal: { code: 'not_enabled' } };
    const capped = await this.#links.capRefusal(record.guildId, record.userId, record.identity);
    if (capped) return { ok: false, refusal: capped };
    const proven = signedIdentity(record, result.address);
    const how = record.farcaster
      ? `Sign in with Farcaster by FID ${record.farcaster.fid} (its ${record.farcaster.authMethod === 'custody' ? 'custody' : 'auth'} address ${proven.address})`
      : `wallet signature by ${proven.address}`;
    const challengeIssuedAt = record.expiresAt - (this.#siwe.ttlMs ?? DEFAULT_CHALLENGE_TTL_MS);
    const linked = await this.#links.save(
      {
        guildId: record.guildId,
        userId: record.userId,
        ...proven,
        proofMethod: 'signature',
        provenAt: this.#now(),
      },
      how,
      { challengeIssuedAt },
    );
    if ('refusal' in linked) return { ok: false, refusal: linked.refusal };
    await this.#syncAfterLink(record.guildId, record.userId, linked.link.provenAt);
    const displaced = await rememberAccountProof(this.#store, this.#logger, {
      record,
      ...proven,
      provenAt: linked.link.provenAt,
      challengeIssuedAt,
    });
    // One wallet backs one Discord account app-wide: the account that proved it before loses it everywhere.
    if (displaced !== null)
      await this.carrier.releaseTaken(displaced, accountSubjectOf(record, proven.address));
    return { ok: true };
  }

  /**
   * Link a proof the member's account made by signature (in another server, or on the Linked Roles page)
   * here, without a new signature (bringProof.ts). Roles follow unless `sync` is false.
   */
  bring(
    guildId: string,
    userId: string,
    target: { identity: string; platform: string },
    proof: AccountProof,
    o: { sync?: boolean; shared?: boolean } = {},
  ): Promise<VerifyResult> {
    return bringProof(
      {
        store: this.#store,
        links: this.#links,
        worker: this.#worker,
        now: this.#now,
        syncAfterLink: (g, u, at) => this.#syncAfterLink(g, u, at),
        unverify: (g, u, names, reason) => this.unverify(g, u, names, { reason }),
      },
      { guildId, userId, target, proof, ...o },
    );
  }

  async #bringIfProven(
    guildId: string,
    userId: string,
    target: { identity: string; platform: string },
    subjects: readonly (string | null)[],
  ): Promise<VerifyResult | null> {
    const proof = proofOfAny(await accountProofsOf(this.#store, userId), subjects);
    return proof ? this.bring(guildId, userId, target, proof) : null;
  }

  /**
   * The identities a name the member typed stands for among proofs: itself, normalised, and for a
   * Farcaster name the FID its profile carries (`farcaster,#77`), which a Sign in with Farcaster proves
   * (a cached read; without it, when the lookup fails, only the name).
   */
  async namesOf(identity: string): Promise<string[]> {
    const name = normalisedIdentity(identity);
    let parsed: ParsedIdentity;
    try {
      parsed = parseIdentity(identity);
    } catch {
      return [name];
    }
    if (parsed.kind !== 'farcaster') return [name];
    const read = await this.#evaluator.readRecord(parsed, false);
    const fid = read.failed ? null : farcasterFidOf(read, parsed);
    return fid === null ? [name] : [name, fidIdentity(fid)];
  }

  /**
   * Remove the member's links (those of `names`, from `namesOf`, or all); roles follow. An identity that
   * carried a spam or risky flag stays on the re-check list until its own credentials clear. Returns how
   * many were removed.
   */
  async unverify(
    guildId: string,
    userId: string,
    names?: readonly string[],
    o: { everywhere?: boolean; reason?: string } = {},
  ): Promise<number> {
    const links = await this.#store.getUserLinks(guildId, userId);
    const why =
      o.reason ??
      (o.everywhere
        ? 'removed by the member everywhere with /unverify everywhere:true'
        : 'removed by the member with /unverify');
    let removed = 0;
    for (const link of links) {
      if (link.releasedAt !== null || (names !== undefined && !names.includes(link.identity))) continue;
      await this.#links.drop(link, why);
      removed += 1;
    }
    if (removed === 0) return 0;
    // Another process serves that server: its due-check pass syncs the member there, their removal at once.
    if (!servesGuild(this.#discord, guildId))
      await this.#store.saveDueCheck({ guildId, userId, dueAt: this.#now(), memberAsked: true });
    else
      await this.#members.sync(guildId, userId, 'unverify', {
        fresh: false,
        checkRecords: false,
        mode: 'immediate',
      });
    return removed;
  }

  async #challenge(
    guildId: string,
    user: { id: string; username: string },
    identity: string,
    address: string,
  ): Promise<VerifyResult> {
    const guild = await guildOf(this.#discord, guildId);
    const challenge = await createChallenge(this.#store, this.#siwe, {
      guildId,
      userId: user.id,
      userName: user.username || null,
      guildName: guild?.name ?? null,
      identity,
      address,
    });
    return {
      kind: 'challenge',
      url: challenge.url,
      expiresAt: challenge.expiresAt,
      address: address.startsWith('0x') ? address.toLowerCase() : address,
    };
  }

  /**
   * Roles after a fresh proof: the record was just read, so it is not read again. The proof saved a due
   * check for now (proveLink), cleared here once the sync queued the changes; when the sync fails the
   * check stays, and the due-check pass syncs the member (after a crash or a restart too).
   */
  async #syncAfterLink(
    guildId: string,
    userId: string,
    provenAt: number,
  ): Promise<Pick<MemberSync, 'applied' | 'notBefore'> & { rolesLater?: true }> {
    let synced: MemberSync;
    try {
      synced = await this.#members.sync(guildId, userId, 'verify', {
        fresh: false,
        checkRecords: false,
        mode: 'immediate',
      });
    } catch (error) {
      this.#logger.error(
        { err: error, guildId, userId },
        'sync after verification failed; the due-check pass applies the roles',
      );
      return { applied: EMPTY_DIFF, rolesLater: true };
    }
    await clearDueCheck(this.#store, this.#logger, { guildId, userId, dueAt: provenAt });
    return synced;
  }
}

/** Identities whose own profile is a Farcaster account (a name or a FID). */
const FARCASTER_KINDS: ReadonlySet<IdentityKind> = new Set(['farcaster', 'farcaster-fid']);

/**
 * The identity's own FID as Web3.bio reports it (its Farcaster profile's `social.uid`); for an identity
 * given as a FID, only when the profile found is that FID's.
 */
function farcasterFidOf(read: Pick<RecordRead, 'profiles'>, parsed: ParsedIdentity): number | null {
  const profile = read.profiles.find((p) => p.platform === 'farcaster');
  const fid = fidOf(profile?.social?.uid);
  if (fid === null || parsed.kind !== 'farcaster-fid') return fid;
  return parsed.identity === fidIdentity(fid) ? fid : null;
}

function refused(refusal: VerifyRefusal): VerifyResult {
  return { kind: 'refused', refusal };
}

function normalisedIdentity(input: string): string {
  try {
    return parseIdentity(input).identity;
  } catch {
    return input.trim().toLowerCase();
  }
}
