import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import {
  type Command,
  type CommandContext,
  identityOption,
  PRIVATE_OPTION,
  stringOption,
  withFreshness,
} from '../src/discord/command.ts';
import { encodeCustomId } from '../src/discord/customId.ts';
import type { MessagePayload } from '../src/render/types.ts';
import { renderWhois } from '../src/render/whois.ts';
import { PLATFORM_SEGMENTS, type PlatformSegment, type Profile } from '../src/web3bio/types.ts';

const isPlatform = (value: unknown): value is PlatformSegment =>
  PLATFORM_SEGMENTS.includes(value as PlatformSegment);

// The same list for the same cached profile, so renderWhois can reuse the message it built for it.
const profileLists = new WeakMap<Profile, Profile[]>();

function listOf(profile: Profile): Profile[] {
  let list = profileLists.get(profile);
  if (!list) {
    list = [profile];
    profileLists.set(profile, list);
  }
  return list;
}

async function whoisPayload(
  identity: string,
  platform: PlatformSegment | undefined,
  selected: number,
  ctx: CommandContext,
): Promise<MessagePayload> {
  const { web3bio } = ctx.deps;
  const fetched = platform
    ? await web3bio.getPlatformProfile(platform, identity).then((f) => ({ ...f, data: listOf(f.data) }))
    : await web3bio.getProfiles(identity);
  const selectId = encodeCustomId('whois', 'select', platform ?? '', identity);
  return renderWhois(fetched.data, selected, withFreshness(ctx.render, fetched), selectId);
}

export default {
  data: {
    name: 'whois',
    description: 'Show the web3 profile of a name or address',
    options: [
      identityOption('ENS, Farcaster, Lens, Basenames, Linea or Solana name, or an EVM or Solana address'),
      {
        type: ApplicationCommandOptionType.String,
        name: 'platform',
        description: 'Only this platform',
        required: false,
        choices: PLATFORM_SEGMENTS.map((p) => ({ name: p, value: p })),
      },
      PRIVATE_OPTION,
    ],
  },
  cooldown: true,
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
  },
} satisfies Command;
