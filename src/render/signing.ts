/** Words about the signing page's Discord sign-in and, later, Linked Roles, for the gating embeds. */
import type { APIEmbedField } from 'discord-api-types/v10';
import { DEFAULT_LOCALE, t } from '../i18n/index.ts';

/** `/gating status` field when DISCORD_CLIENT_SECRET is unset: a signing link works for whoever opens it. */
export function unboundLinksField(locale: string = DEFAULT_LOCALE): APIEmbedField {
  return { name: t(locale, 'gating.signing.title'), value: t(locale, 'gating.signing.unbound') };
}
