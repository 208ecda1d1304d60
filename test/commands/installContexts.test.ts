import { ApplicationIntegrationType, InteractionContextType } from 'discord-api-types/v10';
import { describe, expect, it } from 'vitest';
import { GATING_COMMANDS, LINKED_ROLE_COMMANDS, LOOKUP_COMMANDS } from '../../commands/index.ts';
import { guildCommandData } from '../../src/discord/command.ts';

describe('where each command can be installed and used', () => {
  it.each(LOOKUP_COMMANDS.map((c) => [c.data.name, c.data] as const))(
    '%s installs to servers and accounts and works in servers, the bot DM and other DMs',
    (_name, data) => {
      expect(data.integration_types).toEqual([
        ApplicationIntegrationType.GuildInstall,
        ApplicationIntegrationType.UserInstall,
      ]);
      expect(data.contexts).toEqual([
        InteractionContextType.Guild,
        InteractionContextType.BotDM,
        InteractionContextType.PrivateChannel,
      ]);
    },
  );

  it.each(
    [...GATING_COMMANDS, ...LINKED_ROLE_COMMANDS]
      .filter((c) => c.data.name !== 'unverify')
      .map((c) => [c.data.name, c.data] as const),
  )('%s needs a server install and runs in servers only', (_name, data) => {
    expect(data.integration_types).toEqual([ApplicationIntegrationType.GuildInstall]);
    expect(data.contexts).toEqual([InteractionContextType.Guild]);
  });

  it('unverify needs a server install and runs in servers and the bot DM (everywhere:true there, issue #36)', () => {
    const unverify = GATING_COMMANDS.find((c) => c.data.name === 'unverify');
    expect(unverify?.data.integration_types).toEqual([ApplicationIntegrationType.GuildInstall]);
    expect(unverify?.data.contexts).toEqual([InteractionContextType.Guild, InteractionContextType.BotDM]);
  });

  it('leaves the global-only fields out of guild-scoped registrations', () => {
    for (const command of [...LOOKUP_COMMANDS, ...GATING_COMMANDS]) {
      const data = guildCommandData(command.data);
      expect('contexts' in data || 'integration_types' in data, command.data.name).toBe(false);
    }
  });
});
