/**
 * The lookups installed to a user's account, end to end: used in the bot's DM, in a group DM the bot is
 * not in, and in a server that never installed the bot. The bot answers through the interaction alone,
 * pings nobody, and the gating commands refuse politely without touching anything.
 */
import { REST, Routes } from 'discord.js';
import { ApplicationIntegrationType, InteractionContextType } from 'discord-api-types/v10';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commandsFor, GATING_COMMANDS, LOOKUP_COMMANDS } from '../../commands/index.ts';
import type { FakeGuild, InteractionResult, RunCommandInput } from '../../fakes/discord/server.ts';
import { GATING_ENV } from './gatingHarness.ts';
import {
  ALICE,
  BOB,
  type Harness,
  isEphemeral,
  messageBodies,
  startHarness,
  visibleMessage,
} from './harness.ts';

describe('user-installed lookups', () => {
  let h: Harness;
  let uninstalled: FakeGuild;
  beforeAll(async () => {
    h = await startHarness({ env: { ...GATING_ENV, USER_COOLDOWN_COMMANDS: '0', LOG_LEVEL: 'info' } });
    uninstalled = h.discord.addGuild({ name: 'Never installed the bot', botInstalled: false });
    h.discord.addMember(uninstalled.id, { id: ALICE, username: 'alice' });
  });
  afterAll(() => h.close());

  /** Plays a command and returns its result with the REST calls it caused other than its own answer. */
  async function play(input: Omit<RunCommandInput, 'userId'>) {
    const before = h.discord.requests.length;
    const result = await h.discord.runCommand({ userId: ALICE, ...input });
    const own = (path: string) => path.startsWith('/interactions/') || path.startsWith('/webhooks/');
    const sideEffects = h.discord.requests.slice(before).filter((r) => !own(r.path));
    return { result, sideEffects };
  }

  function expectInertEmbedReply(result: InteractionResult): void {
    for (const body of messageBodies(h.discord, result.interactionId)) {
      expect(body.allowed_mentions).toEqual({ parse: [] });
    }
    const message = visibleMessage(result);
    expect(message.embeds).toHaveLength(1);
    expect(message.mentions).toEqual([]);
    expect(message.mention_everyone).toBe(false);
  }

  const whois = { name: 'whois', options: [{ type: 3, name: 'identity', value: 'vitalik.eth' }] };

  it('answers /whois in the bot DM with the profile embed, through the interaction only', async () => {
    const { result, sideEffects } = await play({ ...whois, guildId: null });
    expectInertEmbedReply(result);
    expect(visibleMessage(result).embeds[0]?.title).toContain('vitalik.eth');
    expect(sideEffects).toEqual([]);
  });

  it('answers /whois in a group DM the bot is not in', async () => {
    const { result, sideEffects } = await play({ ...whois, guildId: null, groupDmWith: [BOB] });
    expectInertEmbedReply(result);
    expect(visibleMessage(result).embeds[0]?.title).toContain('vitalik.eth');
    expect(sideEffects).toEqual([]);
  });

  it('answers /whois in a server that did not install the bot, reading nothing of that server', async () => {
    const { result, sideEffects } = await play({ ...whois, guildId: uninstalled.id });
    expectInertEmbedReply(result);
    expect(visibleMessage(result).embeds[0]?.title).toContain('vitalik.eth');
    expect(sideEffects).toEqual([]);
  });

  it.each([
    ['the bot DM', { guildId: null }],
    ['a server without the bot', { guildId: 'uninstalled' }],
  ])('refuses /verify in %s politely, changing nothing', async (_where, place) => {
    const guildId = place.guildId === 'uninstalled' ? uninstalled.id : null;
    const upstreamBefore = h.upstreamCount();
    const { result, sideEffects } = await play({
      name: 'verify',
      guildId,
      options: [{ type: 3, name: 'identity', value: 'vitalik.eth' }],
    });
    const message = visibleMessage(result);
    expect(isEphemeral(message)).toBe(true);
    expect(message.embeds[0]?.title).toBe('Server only');
    expect(sideEffects).toEqual([]);
    expect(h.upstreamCount()).toBe(upstreamBefore);
  });

  it('registers the lookups for user installs everywhere and gating for server installs in servers only (and /unverify in the bot DM, issue #36)', async () => {
    const rest = new REST({ api: h.discord.apiUrl }).setToken(h.discord.token);
    const body = commandsFor({ GATING_ENABLED: true }).map((c) => c.data);
    await rest.put(Routes.applicationCommands(h.discord.applicationId), { body });
    const registered = h.discord.state.commands.global;
    const lookups = new Set(LOOKUP_COMMANDS.map((c) => c.data.name));
    for (const command of registered) {
      const offeredInDms = command.contexts?.includes(InteractionContextType.BotDM) ?? false;
      const userInstall =
        command.integration_types?.includes(ApplicationIntegrationType.UserInstall) ?? false;
      expect({ name: command.name, offeredInDms, userInstall }).toEqual({
        name: command.name,
        // /unverify everywhere:true is the default in a DM with the bot (issue #36).
        offeredInDms: lookups.has(command.name) || command.name === 'unverify',
        userInstall: lookups.has(command.name),
      });
    }
    expect(registered.map((c) => c.name)).toEqual(
      expect.arrayContaining(GATING_COMMANDS.map((c) => c.data.name)),
    );
  });
});
