/**
 * Translations run longer than English. A pseudo-locale whose every message is 40% longer than en-US
 * goes through the real renderers with hostile and very long data: every reply must still fit Discord.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { registerCatalog, t } from '../../src/i18n/index.ts';
import { renderAvatar } from '../../src/render/avatar.ts';
import { renderCredentials } from '../../src/render/credentials.ts';
import { renderDomain } from '../../src/render/domain.ts';
import {
  renderCooldown,
  renderError,
  renderExpiredControls,
  renderNotYourControls,
} from '../../src/render/errors.ts';
import { renderWallet } from '../../src/render/wallet.ts';
import { renderWhois } from '../../src/render/whois.ts';
import {
  ApiKeyRequiredError,
  InvalidIdentityError,
  NetworkError,
  NotFoundError,
  RateLimitedError,
  SchemaError,
  TimeoutError,
  UnauthorizedError,
  UpstreamError,
} from '../../src/web3bio/errors.ts';
import { generator } from '../render/hostileData.ts';
import { assertWithinDiscordLimits } from '../render/limits.ts';
import { PSEUDO, pseudoCatalog } from './pseudo.ts';

const RUNS = 30;

beforeAll(() => registerCatalog(PSEUDO, pseudoCatalog()));

describe(`pseudo-locale ${PSEUDO} (every message 40% longer)`, () => {
  it('is what the renderers read', () => {
    const english = t('en-US', 'whois.empty.title');
    expect(t(PSEUDO, 'whois.empty.title').length).toBeGreaterThanOrEqual(Math.floor(english.length * 1.4));
    expect(renderWhois([], 0, generator(1, [PSEUDO]).context(), 'id').embeds[0]?.title).toMatch(/ŀőŗēɱ/);
  });

  it('whois, avatar, creds, domain and wallet stay within Discord limits', () => {
    for (let seed = 1; seed <= RUNS; seed++) {
      const g = generator(seed, [PSEUDO]);
      const profiles = Array.from({ length: 1 + g.int(35) }, g.profile);
      assertWithinDiscordLimits(renderWhois(profiles, g.int(40) - 2, g.context(), g.text(3) || 'id'));
      assertWithinDiscordLimits(renderAvatar({ identity: g.text(), url: g.profile().avatar }, g.context()));
      assertWithinDiscordLimits(renderCredentials(g.text(), g.credentials(), g.context()));
      assertWithinDiscordLimits(renderDomain(g.domain(), g.context()));
      const bundle = g.wallet();
      for (const page of [0, 1, 7]) {
        assertWithinDiscordLimits(renderWallet(bundle, page, g.context(), (p) => `w|${p}`));
      }
    }
  });

  it('every error reply stays within Discord limits', () => {
    const url = 'https://api.web3.bio/profile/x';
    for (let seed = 1; seed <= RUNS; seed++) {
      const g = generator(seed, [PSEUDO]);
      const ctx = g.context();
      const errors = [
        new InvalidIdentityError(g.text(), g.text()),
        new NotFoundError(g.text()),
        new RateLimitedError(url, '', g.int(1e6)),
        new RateLimitedError(url, '', null),
        new UpstreamError(502, url, ''),
        new TimeoutError(url, 1),
        new NetworkError(url, null),
        new ApiKeyRequiredError('wallet'),
        new UnauthorizedError(403, url, ''),
        new SchemaError(url, 'x', []),
        new Error('internal'),
      ];
      for (const error of errors) assertWithinDiscordLimits(renderError(error, ctx));
      assertWithinDiscordLimits(renderCooldown(g.int(1e7), ctx));
      assertWithinDiscordLimits(renderNotYourControls('whois', PSEUDO));
      assertWithinDiscordLimits(renderExpiredControls('wallet', PSEUDO));
    }
  });
});
