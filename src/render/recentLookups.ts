import type { ForgottenLookups } from '../cache/recentLookups.ts';
import { t } from '../i18n/index.ts';
import type { MessagePayload } from './types.ts';

/** What /forget-lookups cleared, privately, in the member's `locale`. */
export function renderForgottenLookups(forgotten: ForgottenLookups, locale: string): MessagePayload {
  const content =
    forgotten.lookups === 0
      ? t(locale, 'recent.forgotNone')
      : t(locale, 'recent.forgot', { lookups: forgotten.lookups, servers: forgotten.servers });
  return { content, embeds: [], components: [], allowed_mentions: { parse: [] } };
}
