import { cleanLine } from '../text/safety.ts';
import type { Platform } from '../web3bio/types.ts';

/** Embed colours for states that are not a platform. */
export const COLORS = {
  neutral: 0x99aab5,
  success: 0x57f287,
  warning: 0xfee75c,
  caution: 0xf0b232,
  danger: 0xed4245,
  info: 0x5865f2,
} as const;

const PLATFORMS: Record<string, { name: string; color: number }> = {
  ens: { name: 'ENS', color: 0x5298ff },
  farcaster: { name: 'Farcaster', color: 0x8a63d2 },
  lens: { name: 'Lens', color: 0xabfe2c },
  basenames: { name: 'Basenames', color: 0x0052ff },
  linea: { name: 'Linea', color: 0x61dfff },
  sns: { name: 'SNS', color: 0x9945ff },
  solana: { name: 'Solana', color: 0x14f195 },
  unstoppabledomains: { name: 'Unstoppable Domains', color: 0x4c47f7 },
  dotbit: { name: '.bit', color: 0x00df9b },
  ethereum: { name: 'Ethereum', color: 0x627eea },
  twitter: { name: 'X (Twitter)', color: 0x1d9bf0 },
  firefly: { name: 'Firefly', color: 0xf97316 },
};

function knownPlatform(platform: Platform): { name: string; color: number } | undefined {
  return Object.hasOwn(PLATFORMS, platform) ? PLATFORMS[platform] : undefined;
}

/** A readable platform name as plain text (escape it for markdown); unknown platforms keep their label. */
export function platformName(platform: Platform): string {
  return knownPlatform(platform)?.name ?? (cleanLine(platform) || 'Unknown');
}

/** The platform's brand colour, or a neutral grey for unknown platforms. */
export function platformColor(platform: Platform): number {
  return knownPlatform(platform)?.color ?? COLORS.neutral;
}
