const DISCORD_EPOCH_MS = 1_420_070_400_000n;
let sequence = 0n;

/** A fresh, unique, time-ordered Discord snowflake (discord.js reads creation times from these). */
export function nextSnowflake(): string {
  sequence = (sequence + 1n) & 0x3f_ffffn;
  return (((BigInt(Date.now()) - DISCORD_EPOCH_MS) << 22n) | sequence).toString();
}

/** Orders snowflakes numerically (string order is wrong when lengths differ). */
export function compareSnowflakes(a: string, b: string): number {
  const diff = BigInt(a) - BigInt(b);
  return diff === 0n ? 0 : diff < 0n ? -1 : 1;
}

/** The shard a guild's events go to: `(guild_id >> 22) % shard_count`, as Discord routes them. */
export function shardOf(guildId: string, shardCount: number): number {
  return Number((BigInt(guildId) >> 22n) % BigInt(shardCount));
}

/** A fresh snowflake whose guild would be served by `shard` of `shardCount` (for tests that spread guilds). */
export function snowflakeOnShard(shard: number, shardCount: number): string {
  const id = nextSnowflake();
  const offset = (shard - shardOf(id, shardCount) + shardCount) % shardCount;
  // Move the timestamp part forward to the wanted shard; the sequence part keeps it unique.
  return ((((BigInt(id) >> 22n) + BigInt(offset)) << 22n) | (BigInt(id) & 0x3f_ffffn)).toString();
}
