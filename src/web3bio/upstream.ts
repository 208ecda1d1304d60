/**
 * The client's reads of the upstream: one answer checked and parsed, avatars, and batch requests
 * collected per turn of the event loop and matched back to the ids asked for.
 */
import type { ZodType } from 'zod';
import { avatarUrl, isErrorBody, parseJson } from './answers.ts';
import { BatchScheduler } from './batchScheduler.ts';
import { NotFoundError, UpstreamError } from './errors.ts';
import type { Web3BioTransport } from './http.ts';
import { encodeSegment } from './identity.ts';
import { parseResponse, RawNsProfileList, RawProfileList, toNsProfile, toProfile } from './schemas.ts';
import type { AvatarResult, NsProfile } from './types.ts';

/** The server's batch limit. */
export const MAX_BATCH_IDS = 30;

export type BatchKind = 'profile' | 'ns';

/** Reads answers from the upstream through the transport (no cache here). */
export class Web3BioUpstream {
  readonly #transport: Web3BioTransport;
  readonly #batchers: Record<BatchKind, BatchScheduler>;

  constructor(transport: Web3BioTransport) {
    this.#transport = transport;
    this.#batchers = {
      profile: new BatchScheduler(MAX_BATCH_IDS, (ids) => this.#fetchBatch('profile', ids)),
      ns: new BatchScheduler(MAX_BATCH_IDS, (ids) => this.#fetchBatch('ns', ids)),
    };
  }

  async getJson<T>(
    path: string,
    identity: string,
    schema: ZodType<T>,
    timeoutMs: number | undefined,
  ): Promise<T> {
    const answer = await this.#transport.get(path, { identity, timeoutMs });
    if (answer.status !== 200) throw new UpstreamError(answer.status, answer.url, answer.body);
    const data = parseJson(answer);
    // A 200 carrying an error body, or an empty list, is a failed lookup, not an answer.
    if (isErrorBody(data) || (Array.isArray(data) && data.length === 0)) {
      throw new NotFoundError(identity, answer.status, answer.url, answer.body);
    }
    return parseResponse(schema, data, answer.url);
  }

  async getAvatar(identity: string, timeoutMs: number | undefined): Promise<AvatarResult> {
    const answer = await this.#transport.get(`/avatar/${encodeSegment(identity)}`, {
      identity,
      timeoutMs,
    });
    return { identity, url: avatarUrl(answer, identity) };
  }

  /** One id's answer, sent with the other ids asked for in the same turn (NotFoundError when dropped). */
  loadBatched(kind: BatchKind, id: string): Promise<NsProfile> {
    return this.#batchers[kind].load(id);
  }

  /** Close the owned connection pool; queued requests are rejected. */
  close(): Promise<void> {
    return this.#transport.close();
  }

  /** One batch request (at most 30 ids); each id's answer, or NotFoundError when the server dropped it. */
  async #fetchBatch(kind: BatchKind, ids: readonly string[]): Promise<Map<string, NsProfile>> {
    const path = `/${kind}/batch/${encodeSegment(JSON.stringify(ids))}`;
    const answer = await this.#transport.get(path, { identity: ids.join(' ') });
    const data = parseJson(answer);
    const list: NsProfile[] =
      kind === 'profile'
        ? parseResponse(RawProfileList, data, answer.url).map(toProfile)
        : parseResponse(RawNsProfileList, data, answer.url).map(toNsProfile);
    const byAlias = new Map<string, NsProfile>();
    for (const item of list) {
      // Aliases are how the server says which requested id an answer belongs to; its own
      // platform,identity pair is an exact match too.
      for (const alias of [...item.aliases, `${item.platform},${item.identity}`]) {
        const key = alias.toLowerCase();
        if (!byAlias.has(key)) byAlias.set(key, item);
      }
    }
    const out = new Map<string, NsProfile>();
    for (const id of ids) {
      const item = byAlias.get(id.toLowerCase());
      if (item) out.set(id, item);
    }
    return out;
  }
}
