/** What the gating service is built from: the store, the clients, the sentences, and its tuning. */

import type { Client } from 'discord.js';
import type { DiscordOAuthConfig } from '../discord/oauth.ts';
import type { Logger } from '../ops/log.ts';
import type { GatingStore } from '../store/types.ts';
import type { Web3BioClient } from '../web3bio/client.ts';
import type { HoldingsReader } from './holdings/holdingsReader.ts';
import type { SiweConfig } from './proofs/challengeMessage.ts';
import type { RecheckEvent } from './rechecks/guildRechecks.ts';
import type { RecheckScheduler } from './rechecks/scheduler.ts';
import type { RoleWorkerOptions } from './roles/roleWorker.ts';
import type { NoticeText } from './types.ts';

export interface GatingServiceOptions {
  store: GatingStore;
  web3bio: Web3BioClient;
  /** discord.js, logged in. */
  discord: Client;
  logger: Logger;
  siwe: SiweConfig;
  /** Sign in with Farcaster is configured (OPTIMISM_RPC_URL): `/verify` offers it for Farcaster identities. */
  farcaster?: boolean;
  /** The sentences of the log channel and direct messages (render's `gatingNoticeText`). */
  noticeText: NoticeText;
  recheckIntervalMs: number;
  now?: () => number;
  /** Default: an IntervalScheduler on `recheckIntervalMs` with ±10% jitter. */
  scheduler?: RecheckScheduler;
  /** Role worker tuning (tests shorten the waits). */
  worker?: Pick<
    RoleWorkerOptions,
    'pollMs' | 'maxAttempts' | 'backoffMs' | 'probeMs' | 'maxProbeMs' | 'leaseMs'
  >;
  /** With LINKED_ROLES_ENABLED: the OAuth2 client and TOKEN_ENCRYPTION_KEY as bytes. */
  linkedRoles?: { oauth: DiscordOAuthConfig; key: Buffer };
  /** Runs the Linked Roles re-checks. Default: an IntervalScheduler on `recheckIntervalMs`. */
  linkedRoleScheduler?: RecheckScheduler;
  /** Whether this process runs the Linked Roles re-check (with shards, the manager does). Default true. */
  linkedRoleRechecks?: boolean;
  /**
   * With shards: the HTTP server runs in the shard manager and queues verified signatures in the store;
   * this process links those of the guilds its shards serve (see signedProofs.ts), looking every `pollMs`.
   */
  signedProofInbox?: { pollMs?: number };
  /** How long log-channel lines are gathered into one message. Default 1000 ms. */
  logFlushMs?: number;
  /** Member-list pages a second for re-check walks (a share of the bot's REST limit). Default 40. */
  memberListPagesPerSecond?: number;
  /** Members evaluated at once during a guild re-check. Default 16. */
  recheckConcurrency?: number;
  /** An automated removal needs the loss seen twice at least this far apart. Default 60 min. */
  confirmMs?: number;
  /** Holdings rules' chain reads (issue #35): the chains whose RPC URL is set. */
  holdings?: HoldingsReader | undefined;
  /** Told after each guild's re-check (metrics). */
  onRechecked?: (event: RecheckEvent) => void;
  /** Audit events older than this are deleted. Default 180 days. */
  auditRetentionMs?: number;
  /**
   * With web replicas (INTERACTIONS=http): keep each server's owner and roles in the store, where the
   * replicas read them (authoritySnapshots.ts). `debounceMs`: how long a server's events are gathered.
   */
  authoritySnapshots?: { debounceMs?: number };
  /** How often the due-check pass runs. Default 60 s. */
  dueCheckMs?: number;
  /** How often sharing turned on in another process is picked up here (sharingPickUp.ts). Default 30 s. */
  sharingPickUpMs?: number;
  /**
   * With the owners' dashboard: answer the dashboard requests of this process's guilds that other
   * processes queue in the store (requests.ts), looking every `pollMs` and when nudged.
   */
  dashboardInbox?: { pollMs: number; leaseMs: number };
}
