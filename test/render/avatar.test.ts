import { describe, expect, it } from 'vitest';
import { renderAvatar } from '../../src/render/avatar.ts';
import { ctx, fixtureText, HOSTILE } from './fixtures.ts';
import { assertWithinDiscordLimits } from './limits.ts';

function avatar(identity: string, url: string | null, context = ctx()) {
  const payload = renderAvatar({ identity, url }, context);
  assertWithinDiscordLimits(payload);
  const embed = payload.embeds[0];
  if (!embed) throw new Error('no embed');
  return { payload, embed };
}

describe('renderAvatar', () => {
  it('shows the avatar large with its link', () => {
    const url = fixtureText('avatar-sujiyan.location.txt').trim();
    const { embed } = avatar('sujiyan.eth', url);
    expect(embed.title).toBe('Avatar of sujiyan.eth');
    expect(embed.image?.url).toBe('https://euc.li/sujiyan.eth');
    expect(embed.url).toBe('https://euc.li/sujiyan.eth');
    expect(embed.description).toBe('[Open the image at full size](https://euc.li/sujiyan.eth)');
  });

  it('says clearly when there is no avatar', () => {
    const { embed } = avatar('nobody.eth', null);
    expect(embed.description).toBe('nobody.eth has no avatar set.');
    expect(embed.image).toBeUndefined();
  });

  it('treats an unsafe URL as no avatar', () => {
    const { embed } = avatar('x.eth', 'javascript:alert(1)');
    expect(embed.image).toBeUndefined();
    expect(embed.description).toContain('has no avatar');
  });

  it('rewrites ipfs avatars through the gateway', () => {
    const { embed } = avatar('x.eth', 'ipfs://QmCID', ctx({ ipfsGateway: 'https://dweb.link' }));
    expect(embed.image?.url).toBe('https://dweb.link/ipfs/QmCID');
  });

  it('escapes a hostile identity and notes stale data', () => {
    const { payload, embed } = avatar(HOSTILE, null, ctx({ stale: { fetchedAt: 1_000_000 } }));
    expect(embed.title).toContain('@\u200beveryone');
    expect(payload.content).toContain('<t:1000:R>');
  });
});
