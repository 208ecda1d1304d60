/**
 * What the bot's discord.js caches keep (src/discord/clientCaches.ts), against discord.js's defaults, with
 * a real client on the stand-in Discord; and that a gating walk's member list does not depend on them.
 */
import { type Client, GatewayDispatchEvents, type GuildMember } from 'discord.js';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loginClient } from '../../fakes/discord/client.ts';
import { addScaleGuilds, type ScaleGuild } from '../../fakes/discord/scale.ts';
import { type FakeDiscord, startFakeDiscord } from '../../fakes/discord/server.ts';
import {
  botCanManageRoles,
  loadMembers,
  REST_LIST_MAX_MEMBERS,
} from '../../src/gating/roles/discordReads.ts';

const silent = pino({ level: 'silent' });
const SHAPE = { members: 30, roles: 5, channels: 4, emojis: 3, stickers: 2, linked: 7 };

let discord: FakeDiscord;
let small: ScaleGuild;
let large: ScaleGuild;
let huge: ScaleGuild;
let lean: Client;
let defaults: Client;

beforeAll(async () => {
  discord = await startFakeDiscord();
  [small] = addScaleGuilds(discord.state, 1, SHAPE) as [ScaleGuild];
  // Listed over REST (three pages of at most 1,000), and past the REST limit, over the gateway (op 8).
  [large] = addScaleGuilds(discord.state, 1, { ...SHAPE, members: 2_600 }) as [ScaleGuild];
  [huge] = addScaleGuilds(discord.state, 1, { ...SHAPE, members: REST_LIST_MAX_MEMBERS + 200 }) as [
    ScaleGuild,
  ];
  [lean, defaults] = await Promise.all([loginClient(discord), loginClient(discord, 'discord.js-defaults')]);
});

afterAll(async () => {
  await Promise.all([lean?.destroy(), defaults?.destroy()]);
  await discord?.close();
});

function guildOn(client: Client, id: string) {
  const guild = client.guilds.cache.get(id);
  if (!guild) throw new Error(`guild ${id} not in the client's cache`);
  return guild;
}

describe('the bot’s discord.js caches', () => {
  it('keep guilds, roles, channels and the bot’s own member; not emojis, stickers or users (the defaults do)', () => {
    const mine = guildOn(lean, small.id);
    const theirs = guildOn(defaults, small.id);
    for (const guild of [mine, theirs]) {
      expect(guild.roles.cache.size).toBe(SHAPE.roles + 2);
      expect(guild.channels.cache.size).toBe(SHAPE.channels);
      expect(guild.members.me?.id).toBe(discord.botUserId);
    }
    expect([mine.emojis.cache.size, mine.stickers.cache.size]).toEqual([0, 0]);
    expect([theirs.emojis.cache.size, theirs.stickers.cache.size]).toEqual([SHAPE.emojis, SHAPE.stickers]);
    expect([...lean.users.cache.keys()]).toEqual([discord.botUserId]);
  });

  it('a member list loaded for a walk is complete, while the member cache keeps only the bot', async () => {
    for (const [scale, expected] of [
      [small, SHAPE.members],
      [large, 2_600],
    ] as const) {
      const roster = await loadMembers(lean, guildOn(lean, scale.id), silent);
      // Every member plus the bot; the linked ones hold the human role.
      expect(roster?.size).toBe(expected + 1);
      for (const userId of scale.memberIds) expect(roster?.get(userId)?.id).toBe(userId);
      expect(roster?.holders(scale.humanRoleId)).toBe(SHAPE.linked);
      expect([...guildOn(lean, scale.id).members.cache.keys()]).toEqual([discord.botUserId]);
    }
    const pages = discord.requests.filter(
      (r) => r.method === 'GET' && r.path === `/guilds/${large.id}/members`,
    );
    expect(pages.map((r) => r.query.limit)).toEqual(['1000', '1000', '1000']);
    // The defaults keep what a fetch returns: the cache the old walk relied on.
    await loadMembers(defaults, guildOn(defaults, small.id), silent);
    expect(guildOn(defaults, small.id).members.cache.size).toBe(SHAPE.members + 1);
  });

  it('each REST page waits for the pacing limiter and gives its slot back', async () => {
    const log: string[] = [];
    const pacer = {
      acquire: async () => {
        log.push('acquire');
        return () => log.push('done');
      },
      close: () => {},
    };
    const roster = await loadMembers(lean, guildOn(lean, large.id), silent, pacer);
    expect(roster?.size).toBe(2_601);
    expect(log).toEqual(['acquire', 'done', 'acquire', 'done', 'acquire', 'done']);
  });

  it('past the REST limit the list comes over the gateway, in chunks of at most 1,000, and is complete', async () => {
    const chunks: number[] = [];
    const onChunk = (data: { guild_id: string; members: unknown[] }) => {
      if (data.guild_id === huge.id) chunks.push(data.members.length);
    };
    lean.ws.on(GatewayDispatchEvents.GuildMembersChunk, onChunk);
    try {
      const roster = await loadMembers(lean, guildOn(lean, huge.id), silent);
      expect(roster?.size).toBe(REST_LIST_MAX_MEMBERS + 201);
      expect(roster?.holders(huge.humanRoleId)).toBe(SHAPE.linked);
    } finally {
      lean.ws.removeListener(GatewayDispatchEvents.GuildMembersChunk, onChunk);
    }
    expect(chunks).toEqual([1_000, 1_000, 1_000, 1_000, 1_000, 201]);
    expect(guildOn(lean, huge.id).members.cache.size).toBe(1);
  });

  it('the bot’s own member outlives member updates and thousands of members passing through', async () => {
    const guild = guildOn(lean, large.id);
    const seen = new Promise<GuildMember>((resolve) =>
      lean.once('guildMemberUpdate', (_old, member) => resolve(member as GuildMember)),
    );
    discord.updateMember(large.id, discord.botUserId, { nick: 'gatekeeper' });
    // Cached, so discord.js reports the update (gating listens to it to unblock roles).
    expect((await seen).nickname).toBe('gatekeeper');
    expect(guild.members.me?.nickname).toBe('gatekeeper');
    expect(botCanManageRoles(guild)).toBe(true);
  });
});
