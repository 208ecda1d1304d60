/** Words about the signing page's Discord sign-in and, later, Linked Roles, for the gating embeds. */
import type { APIEmbedField } from 'discord-api-types/v10';

/** `/gating status` field when DISCORD_CLIENT_SECRET is unset: a signing link works for whoever opens it. */
export function unboundLinksField(): APIEmbedField {
  return {
    name: 'Signing links',
    value:
      '⚠️ Not bound to an account: anyone who opens a member’s signing link can sign it, so a member could get someone else’s wallet signed onto their account. The bot operator should set `DISCORD_CLIENT_SECRET` (see the README).',
  };
}
