/**
 * Property-style checks: random hostile data through every renderer must always satisfy every Discord
 * rule. A seeded generator keeps runs reproducible.
 */
import { describe, it } from 'vitest';
import { renderAvatar } from '../../src/render/avatar.ts';
import { renderCredentials } from '../../src/render/credentials.ts';
import { renderDomain } from '../../src/render/domain.ts';
import { renderCooldown, renderError } from '../../src/render/errors.ts';
import { renderWallet } from '../../src/render/wallet.ts';
import { renderWhois } from '../../src/render/whois.ts';
import { InvalidIdentityError, NotFoundError } from '../../src/web3bio/errors.ts';
import { generator } from './hostileData.ts';
import { assertWithinDiscordLimits } from './limits.ts';

const RUNS = 60;

describe('every renderer on random hostile data', () => {
  it('whois stays within Discord limits', () => {
    for (let seed = 1; seed <= RUNS; seed++) {
      const g = generator(seed);
      const profiles = Array.from({ length: 1 + g.int(35) }, g.profile);
      assertWithinDiscordLimits(renderWhois(profiles, g.int(40) - 2, g.context(), g.text(3) || 'id'));
    }
  });

  it('avatar stays within Discord limits', () => {
    for (let seed = 1; seed <= RUNS; seed++) {
      const g = generator(seed);
      assertWithinDiscordLimits(renderAvatar({ identity: g.text(), url: g.profile().avatar }, g.context()));
    }
  });

  it('credentials stay within Discord limits', () => {
    for (let seed = 1; seed <= RUNS; seed++) {
      const g = generator(seed);
      assertWithinDiscordLimits(renderCredentials(g.text(), g.credentials(), g.context()));
    }
  });

  it('domain stays within Discord limits', () => {
    for (let seed = 1; seed <= RUNS; seed++) {
      const g = generator(seed);
      assertWithinDiscordLimits(renderDomain(g.domain(), g.context()));
    }
  });

  it('wallet stays within Discord limits on every page', () => {
    for (let seed = 1; seed <= RUNS / 3; seed++) {
      const g = generator(seed);
      const bundle = g.wallet();
      for (const page of [-1, 0, 1, 2, 7, 100]) {
        assertWithinDiscordLimits(renderWallet(bundle, page, g.context(), (p) => `w|${p}`));
      }
    }
  });

  it('errors and cooldowns stay within Discord limits', () => {
    for (let seed = 1; seed <= RUNS; seed++) {
      const g = generator(seed);
      const ctx = g.context();
      assertWithinDiscordLimits(renderError(new InvalidIdentityError(g.text(), g.text()), ctx));
      assertWithinDiscordLimits(renderError(new NotFoundError(g.text()), ctx));
      assertWithinDiscordLimits(renderCooldown(g.int(1e7) - 1000, ctx));
    }
  });
});
