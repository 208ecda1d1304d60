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
