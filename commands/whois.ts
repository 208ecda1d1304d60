import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import { LRUCache } from 'lru-cache';
import {
  type Command,
  type CommandContext,
  identityOption,
  PRIVATE_OPTION,
  stringOption,
  USER_INSTALLABLE,
  withFreshness,
} from '../src/discord/command.ts';
import { encodeCustomId } from '../src/discord/customId.ts';
import { described } from '../src/i18n/index.ts';
import { deepFreeze } from '../src/render/payload.ts';
import type { MessagePayload } from '../src/render/types.ts';
import { renderWhois } from '../src/render/whois.ts';
import { PLATFORM_SEGMENTS, type PlatformSegment } from '../src/web3bio/types.ts';

const isPlatform = (value: unknown): value is PlatformSegment =>
  PLATFORM_SEGMENTS.includes(value as PlatformSegment);

/** Messages kept for reuse: a cache hit renders nothing. Bounded; a new fetch time is a new key. */
export const WHOIS_MESSAGES_MAX = 1_000;
const builtMessages = new LRUCache<string, MessagePayload>({ max: WHOIS_MESSAGES_MAX });

/** How many built messages are kept (for tests and diagnostics). */
export function whoisMessageCount(): number {
  return builtMessages.size;
}

async function whoisPayload(
  identity: string,
  platform: PlatformSegment | undefined,
  selected: number,
  ctx: CommandContext,
): Promise<MessagePayload> {
  const { web3bio } = ctx.deps;
  const fetched = platform
    ? await web3bio.getPlatformProfile(platform, identity).then((f) => ({ ...f, data: [f.data] }))
    : await web3bio.getProfiles(identity);
  const render = withFreshness(ctx.render, fetched);
  // By value: everything the message depends on. The fetch time stands for the data, so an equal answer
  // read back from Redis (new objects) hits too, and a refetch misses. `nowSec` is not used by renderWhois.
  const key = JSON.stringify([
    identity,
    platform ?? '',
    fetched.fetchedAt,
    selected,
    render.locale,
    render.ipfsGateway,
    render.stale?.fetchedAt ?? null,
  ]);
  const built = builtMessages.get(key);
  if (built) return built;
  const selectId = encodeCustomId('whois', 'select', platform ?? '', identity);
  const payload = deepFreeze(renderWhois(fetched.data, selected, render, selectId));
  builtMessages.set(key, payload);
  return payload;
}

/** The custom id of a menu whose options' values are identities: choosing one opens its /whois card. */
export const WHOIS_OPEN_ID = encodeCustomId('whois', 'open');

export default {
  data: {
    name: 'whois',
    ...USER_INSTALLABLE,
    ...described('commands.whois.description'),
    options: [
      identityOption('commands.whois.options.identity'),
      {
        type: ApplicationCommandOptionType.String,
        name: 'platform',
        ...described('commands.whois.options.platform'),
        required: false,
        choices: PLATFORM_SEGMENTS.map((p) => ({ name: p, value: p })),
      },
      PRIVATE_OPTION,
    ],
  },
  cooldown: true,
  remembersLookup: true,
  componentsOwnerOnly: true,
  answer(options, ctx) {
    const platform = isPlatform(options.platform) ? options.platform : undefined;
    return whoisPayload(stringOption(options, 'identity'), platform, 0, ctx);
  },
  components: {
    select([platform, identity], values, ctx) {
      const selected = Number.parseInt(values[0] ?? '0', 10);
      return whoisPayload(identity ?? '', isPlatform(platform) ? platform : undefined, selected, ctx);
    },
    /** A menu whose chosen value is the identity (the message menu's list): its full card. */
    open(_args, values, ctx) {
      return whoisPayload(values[0] ?? '', undefined, 0, ctx);
    },
  },
} satisfies Command;
