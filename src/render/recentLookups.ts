import type { ForgottenLookups } from '../cache/recentLookups.ts';
import { t } from '../i18n/index.ts';
import type { MessagePayload } from './types.ts';

/** What /forget-lookups cleared, privately, in the member's `locale`. */
export function renderForgottenLookups(forgotten: ForgottenLookups, locale: string): MessagePayload {
  const { lookups, publicLookups, servers } = forgotten;
  const content =
    lookups === 0 && publicLookups === 0
      ? t(locale, 'recent.forgotNone')
      : t(locale, 'recent.forgot', { lookups, publicLookups, servers });
  return { content, embeds: [], components: [], allowed_mentions: { parse: [] } };
}
