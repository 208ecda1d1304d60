/** What a `/whois` reply reads like in each shipped locale (reviewed by eye in the snapshot file). */
import { describe, expect, it } from 'vitest';
import { SHIPPED_LOCALES } from '../../src/i18n/index.ts';
import { renderWhois } from '../../src/render/whois.ts';
import { ctx, NOW_SEC, vitalikProfiles } from '../render/fixtures.ts';
import { assertWithinDiscordLimits } from '../render/limits.ts';

describe('/whois in every shipped locale', () => {
  it.each(SHIPPED_LOCALES)('%s', (locale) => {
    const stale = { fetchedAt: (NOW_SEC - 3_600) * 1_000 };
    const payload = renderWhois(vitalikProfiles(), 0, ctx({ locale, stale }), 'whois|select||vitalik.eth');
    assertWithinDiscordLimits(payload);
    expect(payload).toMatchSnapshot();
  });
});
