import type { ForgottenLookups } from '../cache/recentLookups.ts';
import type { MessagePayload } from './types.ts';

const plural = (count: number, one: string, many: string) => `${count} ${count === 1 ? one : many}`;

/** What /forget-lookups cleared, privately. */
export function renderForgottenLookups(forgotten: ForgottenLookups): MessagePayload {
  const content =
    forgotten.lookups === 0
      ? 'You have no recent lookups to forget. Identity options will only suggest names as you type them.'
      : `Forgot your ${plural(forgotten.lookups, 'recent lookup', 'recent lookups')}` +
        (forgotten.servers === 0
          ? '.'
          : `, and took your public ones out of the suggestions of ${plural(forgotten.servers, 'server', 'servers')}.`) +
        ' Lookups you make from now on are remembered again.';
  return { content, embeds: [], components: [], allowed_mentions: { parse: [] } };
}
