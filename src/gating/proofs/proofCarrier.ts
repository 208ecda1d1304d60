/**
 * Carrying a member's account proofs between servers (issue #36): which servers each counts in, bringing
 * them where the member shares them (on joining, or when they turn sharing on), and removing them
 * everywhere. A server learns of a proof only when it is linked there; nothing here shows one server
 * another's links: the member asks about their own.
 */
import type { Client } from 'discord.js';
import type { Logger } from '../../ops/log.ts';
import type { AccountProof, GatingStore, LinkRecord } from '../../store/types.ts';
import { guildOf, memberOf, servesGuild } from '../roles/discordReads.ts';
import type { MemberGating } from '../roles/memberGating.ts';
import { accountProofsOf, sharedIdentityOf } from './accountProofs.ts';

/** What the carrier asks of verification (verification.ts): bring a proof, remove links in one server. */
export interface ProofLinker {
  bring(
    guildId: string,
    userId: string,
    target: { identity: string; platform: string },
    proof: AccountProof,
    o?: { sync?: boolean; shared?: boolean },
  ): Promise<{ kind: string }>;
  unverify(
    guildId: string,
    userId: string,
    names?: readonly string[],
    o?: { everywhere?: boolean; reason?: string },
  ): Promise<number>;
}

export interface ProofCarrierOptions {
  store: GatingStore;
  discord: Client;
  logger: Logger;
  verification: ProofLinker;
  members: MemberGating;
  now: () => number;
}

/** A proof and the servers (ids) where it is linked now. */
export interface ProofInServers {
  proof: AccountProof;
  guildIds: string[];
  /** The servers' names, in the order of `guildIds`. */
  servers: string[];
}

/** What `/unverify … everywhere:true` removed. */
export interface RemovedEverywhere {
  proofs: number;
  links: number;
  servers: number;
  /** The names a Linked Roles connection of those proofs is cleared by (the caller clears it). */
  names: string[] | undefined;
}

/** Whether a link carries this proof: its subject by name, or its signed wallet. */
export function linkCarries(link: LinkRecord, proof: AccountProof): boolean {
  if (link.releasedAt !== null) return false;
  if (link.identity === proof.subject || link.identity === proof.identity) return true;
  return link.proofMethod === 'signature' && link.address === proof.address;
}

export class ProofCarrier {
  readonly #o: ProofCarrierOptions;
  /** Bringing in progress, by `guildId:userId`. */
  readonly #bringing = new Map<string, Promise<void>>();

  constructor(options: ProofCarrierOptions) {
    this.#o = options;
  }

  /** The member's proofs by signature, oldest first. */
  proofs(userId: string): Promise<AccountProof[]> {
    return accountProofsOf(this.#o.store, userId);
  }

  /** Whether the member shares their proofs with every server. */
  shares(userId: string): Promise<boolean> {
    return this.#o.store.sharesProofs(userId);
  }

  /**
   * Each proof of the member with the servers it counts in, by name (the server's id when unknown): for
   * the member's own /whoami, never for a server's moderators.
   */
  async proofsInServers(userId: string): Promise<ProofInServers[]> {
    const [proofs, links] = await Promise.all([this.proofs(userId), this.#o.store.getLinksOfUser(userId)]);
    const names = new Map<string, string>();
    for (const guildId of new Set(links.map((l) => l.guildId)))
      names.set(guildId, (await guildOf(this.#o.discord, guildId))?.name ?? guildId);
    return proofs.map((proof) => {
      const guildIds = [...new Set(links.filter((l) => linkCarries(l, proof)).map((l) => l.guildId))];
      return { proof, guildIds, servers: guildIds.map((id) => names.get(id) ?? id) };
    });
  }

  /**
   * Link the member's proofs in a server where they share them (a join, or sharing turned on); nothing
   * when they do not share, or the server has no gating. Returns how many were linked.
   */
  bringShared(guildId: string, userId: string, o: { sync: boolean }): Promise<number> {
    // One at a time per server and member (the command, a join and the pick-up may meet): the next one
    // finds the links the first made, and counts none.
    const key = `${guildId}:${userId}`;
    const run = (this.#bringing.get(key) ?? Promise.resolve()).then(() =>
      this.#bringShared(guildId, userId, o),
    );
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    this.#bringing.set(key, settled);
    void settled.then(() => {
      if (this.#bringing.get(key) === settled) this.#bringing.delete(key);
    });
    return run;
  }

  async #bringShared(guildId: string, userId: string, o: { sync: boolean }): Promise<number> {
    const { store, verification, logger } = this.#o;
    if (!(await store.sharesProofs(userId))) return 0;
    if (!(await store.getGuildSettings(guildId))?.enabled) return 0;
    const [proofs, links] = await Promise.all([this.proofs(userId), store.getUserLinks(guildId, userId)]);
    let linked = 0;
    for (const proof of proofs) {
      if (links.some((l) => linkCarries(l, proof))) continue;
      const result = await verification.bring(guildId, userId, sharedIdentityOf(proof), proof, {
        sync: false,
        shared: true,
      });
      if (result.kind === 'linked') linked += 1;
      else logger.info({ guildId, userId, result: result.kind }, 'a shared proof was not linked');
    }
    if (linked > 0 && o.sync)
      await this.#o.members.sync(guildId, userId, 'shared proofs', {
        fresh: false,
        checkRecords: false,
        mode: 'immediate',
      });
    return linked;
  }

  /**
   * Sharing on: the member's proofs count in every server with gating they are in (here, those this
   * process serves; the others' processes pick it up from the store, sharingPickUp.ts) and every one they
   * join. Off: no more servers learn of them; the links already made stay until removed with /unverify.
   * Returns the servers linked to now.
   */
  async setSharing(userId: string, on: boolean): Promise<number> {
    await this.#o.store.setProofSharing(userId, on, this.#o.now());
    return on ? (await this.bringToServed(userId)).servers : 0;
  }

  /**
   * The member's shared proofs brought to every gating server this process serves where they are a
   * member: how many servers linked one now, and whether any server failed (logged).
   */
  async bringToServed(userId: string): Promise<{ servers: number; failed: boolean }> {
    const { store, discord, logger } = this.#o;
    let servers = 0;
    let failed = false;
    for (const settings of await store.listGuildSettings({ enabledOnly: true })) {
      if (!servesGuild(discord, settings.guildId)) continue;
      try {
        const guild = await guildOf(discord, settings.guildId);
        // Not a member: nothing to bring. Discord failing to say: tried again on the next pick-up.
        if (!guild || !(await memberOf(guild, userId))) continue;
        if ((await this.bringShared(settings.guildId, userId, { sync: true })) > 0) servers += 1;
      } catch (error) {
        failed = true;
        logger.warn({ err: error, guildId: settings.guildId, userId }, 'sharing proofs with a server failed');
      }
    }
    return { servers, failed };
  }

  /**
   * Another account proved `subject` by its own signature: the account that held it loses every link it
   * carries, in every server (one wallet backs one Discord account app-wide). Roles follow in each.
   */
  async releaseTaken(userId: string, subject: string): Promise<number> {
    const taken: AccountProof = {
      subject,
      userId,
      identity: subject,
      platform: '',
      address: subject,
      provenAt: 0,
    };
    const byGuild = new Map<string, string[]>();
    for (const link of await this.#o.store.getLinksOfUser(userId))
      if (linkCarries(link, taken))
        byGuild.set(link.guildId, [...(byGuild.get(link.guildId) ?? []), link.identity]);
    let released = 0;
    const reason = `its wallet ${subject} was proven by another account with a signature`;
    for (const [guildId, identities] of byGuild)
      released += await this.#o.verification.unverify(guildId, userId, identities, { reason });
    return released;
  }

  /**
   * Remove the member's proofs (those `names` name, or all) from the account and every server; sharing
   * goes off. Roles follow in each server (as /unverify: removals confirmed as usual).
   */
  async removeEverywhere(userId: string, names?: readonly string[]): Promise<RemovedEverywhere> {
    const { store, verification } = this.#o;
    const proofs = await this.proofs(userId);
    const named =
      names === undefined
        ? proofs
        : proofs.filter((p) => names.includes(p.identity) || names.includes(p.subject));
    const removedProofs = await store.removeAccountProofs(
      userId,
      names === undefined ? undefined : [...names, ...named.map((p) => p.subject)],
    );
    await store.setProofSharing(userId, false, this.#o.now());
    const byGuild = new Map<string, string[]>();
    for (const link of await store.getLinksOfUser(userId)) {
      const hit =
        names === undefined || names.includes(link.identity) || named.some((p) => linkCarries(link, p));
      if (link.releasedAt !== null || !hit) continue;
      byGuild.set(link.guildId, [...(byGuild.get(link.guildId) ?? []), link.identity]);
    }
    let links = 0;
    for (const [guildId, identities] of byGuild)
      links += await verification.unverify(guildId, userId, identities, { everywhere: true });
    const clearNames =
      names === undefined ? undefined : [...names, ...named.flatMap((p) => [p.identity, p.subject])];
    return { proofs: removedProofs.length, links, servers: byGuild.size, names: clearNames };
  }
}
