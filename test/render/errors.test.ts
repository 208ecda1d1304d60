import type { APIEmbed } from 'discord-api-types/v10';
import { describe, expect, it } from 'vitest';
import { renderCooldown, renderError } from '../../src/render/errors.ts';
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
import { ACCEPTED_FORMS } from '../../src/web3bio/identity.ts';
import { ctx, HOSTILE, NOW_SEC } from './fixtures.ts';
import { assertWithinDiscordLimits, visibleText } from './limits.ts';

const SECRET = 'sk_live_SECRET_TOKEN_123';

function render(error: unknown): APIEmbed {
  const payload = renderError(error, ctx({ stale: { fetchedAt: 1 } }));
  assertWithinDiscordLimits(payload);
  expect(payload.content).toBeUndefined();
  expect(payload.components).toEqual([]);
  expect(payload.embeds).toHaveLength(1);
  expect(visibleText(payload)).not.toContain(SECRET);
  const embed = payload.embeds[0];
  if (!embed) throw new Error('no embed');
  return embed;
}

const url = `https://api.web3.bio/profile/x?key=${SECRET}`;

describe('renderError', () => {
  it('gives every error kind its own message', () => {
    const errors = [
      new InvalidIdentityError('???', 'unknown format'),
      new NotFoundError('nobody.eth', 404, url, SECRET),
      new RateLimitedError(url, SECRET, null),
      new UpstreamError(502, url, SECRET),
      new TimeoutError(url, 10_000),
      new NetworkError(url, new Error(SECRET)),
      new ApiKeyRequiredError('wallet'),
      new UnauthorizedError(403, url, SECRET),
      new SchemaError(url, 'links.0', [SECRET]),
      new Error(SECRET),
    ];
    const titles = errors.map((error) => render(error).title);
    expect(new Set(titles).size).toBe(errors.length);
  });

  it('lists the accepted forms for invalid input', () => {
    const embed = render(new InvalidIdentityError('???', 'unknown format'));
    expect(embed.title).toBe('❓ Not a web3 identity');
    expect(embed.description).toContain('unknown format');
    for (const form of ACCEPTED_FORMS) expect(embed.description).toContain(`• ${form.slice(0, 5)}`);
    expect(embed.description?.split('\n').filter((l) => l.startsWith('• '))).toHaveLength(
      ACCEPTED_FORMS.length,
    );
  });

  it('names the identity that was not found, escaped', () => {
    expect(render(new NotFoundError('nobody.eth')).description).toBe(
      'Web3.bio knows nothing about **nobody.eth**.',
    );
    expect(render(new NotFoundError(HOSTILE)).description).toContain('@\u200beveryone');
  });

  it('says when to try again after a rate limit', () => {
    expect(render(new RateLimitedError(url, '', 2_500)).description).toContain(`<t:${NOW_SEC + 3}:R>`);
    expect(render(new RateLimitedError(url, '', null)).description).toContain('try again');
  });

  it('distinguishes upstream trouble, timeouts and network failures', () => {
    expect(render(new UpstreamError(500, url, '')).title).toContain('trouble');
    expect(render(new TimeoutError(url, 1)).title).toContain('too long');
    expect(render(new NetworkError(url, null)).title).toContain('reach');
  });

  it('explains key problems', () => {
    expect(render(new ApiKeyRequiredError('wallet')).description).toContain('API key');
    expect(render(new UnauthorizedError(401, url, '')).description).toContain('API key');
  });

  it('shows nothing of unknown errors or non-errors', () => {
    for (const thing of [
      new Error(SECRET),
      new TypeError(SECRET),
      SECRET,
      null,
      undefined,
      { message: SECRET },
    ]) {
      const embed = render(thing);
      expect(embed.title).toBe('💥 Something went wrong');
      expect(embed.description).not.toContain(SECRET);
    }
  });
});

describe('renderCooldown', () => {
  it('says to slow down with a relative time', () => {
    const payload = renderCooldown(4_200, ctx());
    assertWithinDiscordLimits(payload);
    expect(payload.embeds[0]?.title).toContain('Slow down');
    expect(payload.embeds[0]?.description).toContain(`<t:${NOW_SEC + 5}:R>`);
  });
  it('waits at least a second for odd values', () => {
    for (const ms of [0, -100, Number.NaN]) {
      expect(renderCooldown(ms, ctx()).embeds[0]?.description).toContain(`<t:${NOW_SEC + 1}:R>`);
    }
  });
});
