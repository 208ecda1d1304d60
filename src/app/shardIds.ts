/**
 * SHARD_IDS: which of the bot's SHARD_COUNT shards this machine's shard manager runs (`0-15`, `0,2,4`,
 * `0-3,8-11`), so one bot's shards can be split between machines. Each machine's re-checks, role changes
 * and member events follow the servers its shards serve (their guild ids); every identify, on any machine,
 * goes through the one queue per bot in Redis (discord/identifyQueue.ts).
 */

/** The most shards Discord lets one bot have (SHARD_COUNT's own bound). */
const MAX_SHARDS = 16_384;

export type ShardIdsParse = { ok: true; ids: number[] } | { ok: false; problem: string };

/** The ids a SHARD_IDS value names, sorted and each once; or what is wrong with it. */
export function parseShardIds(text: string): ShardIdsParse {
  const ids = new Set<number>();
  for (const part of text.split(',').map((p) => p.trim())) {
    const range = /^(\d{1,5})(?:\s*-\s*(\d{1,5}))?$/.exec(part);
    if (!range) return { ok: false, problem: `"${part}" is neither a shard id nor a range such as 0-15` };
    const first = Number(range[1]);
    const last = Number(range[2] ?? range[1]);
    if (last < first) return { ok: false, problem: `the range ${part} runs backwards` };
    if (last >= MAX_SHARDS) return { ok: false, problem: `shard ids go up to ${MAX_SHARDS - 1}` };
    for (let id = first; id <= last; id += 1) ids.add(id);
  }
  return { ok: true, ids: [...ids].sort((a, b) => a - b) };
}

/** What SHARD_IDS needs from the other keys; empty when it is unset or fits. */
export function shardIdsProblems(env: Record<string, string | undefined>): string[] {
  const text = env.SHARD_IDS?.trim();
  if (!text) return [];
  const parsed = parseShardIds(text);
  if (!parsed.ok) return []; // the schema says what is wrong with the value itself
  const count = Number(env.SHARD_COUNT?.trim());
  if (!Number.isInteger(count) || count < 1)
    return [
      'SHARD_IDS needs SHARD_COUNT as a number: the bot’s shards in all, the same on every machine (not auto, which each machine could read differently)',
    ];
  const problems: string[] = [];
  const beyond = parsed.ids.filter((id) => id >= count);
  if (beyond.length > 0)
    problems.push(`SHARD_IDS names shard ${beyond[0]}, but SHARD_COUNT=${count} has shards 0-${count - 1}`);
  if (!env.REDIS_URL?.trim())
    problems.push(
      'SHARD_IDS needs REDIS_URL: the machines that share the bot’s shards space their identifies through one queue there, as Discord asks',
    );
  return problems;
}
