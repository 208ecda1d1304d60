import { once } from 'node:events';
import {
  ActionRowBuilder,
  ApplicationCommandOptionType,
  ApplicationCommandType,
  ButtonBuilder,
  ButtonStyle,
  Client,
  DiscordAPIError,
  EmbedBuilder,
  Events,
  GatewayIntentBits,
  type Interaction,
  StringSelectMenuBuilder,
} from 'discord.js';
import { PermissionFlagsBits, type RESTPostAPIApplicationCommandsJSONBody } from 'discord-api-types/v10';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { type FakeDiscord, type FakeGuild, startFakeDiscord } from '../../fakes/discord/server.ts';
import { shardOf, snowflakeOnShard } from '../../fakes/discord/snowflake.ts';

type Handler = (interaction: Interaction) => Promise<unknown>;

let fake: FakeDiscord;
let guild: FakeGuild;
let clients: Client[] = [];

beforeEach(async () => {
  fake = await startFakeDiscord();
  guild = fake.addGuild({ name: 'Test Guild' });
  fake.addMember(guild.id, { id: '200000000000000001', username: 'alice' });
});

afterEach(async () => {
  await Promise.all(clients.map((client) => client.destroy()));
  clients = [];
  await fake.close();
});

/** A real discord.js client logged in to the fake, with `handler` answering every interaction. */
async function startBot(
  handler: Handler = async () => {},
  intents = [GatewayIntentBits.Guilds, GatewayIntentBits.GuildMembers],
) {
  const client = new Client({ intents, rest: { api: fake.apiUrl } });
  clients.push(client);
  const errors: unknown[] = [];
  client.on(Events.InteractionCreate, (interaction) => {
    handler(interaction).catch((error: unknown) => errors.push(error));
  });
  const ready = once(client, Events.ClientReady);
  await client.login(fake.token);
  await ready;
  return { client, errors };
}

const ALICE = '200000000000000001';

async function waitUntil(condition: () => boolean, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('gateway', () => {
  it('logs a real client in, with the guild, its roles and the bot member cached', async () => {
    const { client } = await startBot();
    const cached = client.guilds.cache.get(guild.id);
    expect(cached?.name).toBe('Test Guild');
    expect(cached?.roles.cache.has(guild.botRoleId)).toBe(true);
    expect(cached?.members.me?.id).toBe(fake.botUserId);
    // Without GuildPresences, Discord's GUILD_CREATE carries only the bot's own member.
    expect([...(cached?.members.cache.keys() ?? [])]).toEqual([fake.botUserId]);
    expect(client.user?.id).toBe(fake.botUserId);
    expect(fake.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /gateway/bot']);
  });

  it('rejects login with a bad token (401 on GET /gateway/bot)', async () => {
    const client = new Client({ intents: [GatewayIntentBits.Guilds], rest: { api: fake.apiUrl } });
    clients.push(client);
    await expect(client.login('wrong-token')).rejects.toThrow();
    expect(fake.requests.at(-1)?.status).toBe(401);
  });

  it('closes the socket with 4004 on IDENTIFY with a bad token', async () => {
    const socket = new WebSocket(fake.gatewayUrl);
    const [hello] = (await once(socket, 'message')) as [Buffer];
    expect(JSON.parse(hello.toString())).toMatchObject({ op: 10, d: { heartbeat_interval: 41_250 } });
    socket.send(JSON.stringify({ op: 2, d: { token: 'wrong', intents: 1, properties: {} } }));
    const [code] = (await once(socket, 'close')) as [number];
    expect(code).toBe(4004);
  });

  it('acknowledges heartbeats', async () => {
    const socket = new WebSocket(fake.gatewayUrl);
    await once(socket, 'message');
    socket.send(JSON.stringify({ op: 1, d: null }));
    const [ack] = (await once(socket, 'message')) as [Buffer];
    expect(JSON.parse(ack.toString()).op).toBe(11);
    socket.close();
  });

  it('survives a 4000 disconnect: the client resumes and gets what it missed', async () => {
    const { client } = await startBot(async (interaction) => {
      if (interaction.isChatInputCommand()) await interaction.reply('still here');
    });
    const resumed = once(client, Events.ShardResume);
    fake.disconnectGateway(4000);
    // Played while the socket is down: replayed on RESUME.
    const result = await fake.runCommand({ name: 'ping', userId: ALICE });
    const [, replayed] = await resumed;
    expect(replayed).toBeGreaterThanOrEqual(1);
    expect(result.message?.content).toBe('still here');
    expect(fake.requests.filter((r) => r.path === '/gateway/bot')).toHaveLength(1);
  });

  it('dispatches GUILD_MEMBER_ADD when a member joins', async () => {
    const { client } = await startBot();
    const joined = once(client, Events.GuildMemberAdd);
    fake.addMember(guild.id, { id: '200000000000000009', username: 'newcomer' }, { dispatchJoin: true });
    const [member] = await joined;
    expect(member.user.username).toBe('newcomer');
  });

  it('sends member events only to sessions with the GuildMembers intent', async () => {
    const joins: string[] = [];
    const { client } = await startBot(
      async (interaction) => {
        if (interaction.isChatInputCommand()) await interaction.reply('pong');
      },
      [GatewayIntentBits.Guilds],
    );
    client.on(Events.GuildMemberAdd, (member) => joins.push(member.id));
    fake.addMember(guild.id, { id: '200000000000000009', username: 'newcomer' }, { dispatchJoin: true });
    // Dispatches are ordered on the socket: once this command is answered, a join would have arrived.
    await fake.runCommand({ name: 'ping', userId: ALICE });
    expect(joins).toEqual([]);
  });

  it('routes guilds, member events and interactions to the shard that serves them, DMs to shard 0', async () => {
    const onShard1 = fake.addGuild({ id: snowflakeOnShard(1, 2), name: 'Shard one' });
    const onShard0 = shardOf(guild.id, 2) === 0 ? guild : fake.addGuild({ id: snowflakeOnShard(0, 2) });
    for (const g of new Set([onShard0, onShard1]))
      if (!g.members.has(ALICE)) fake.addMember(g.id, { id: ALICE, username: 'alice' });
    const shard0 = new Client({
      intents: [GatewayIntentBits.Guilds],
      rest: { api: fake.apiUrl },
      shards: 0,
      shardCount: 2,
    });
    const shard1 = new Client({
      intents: [GatewayIntentBits.Guilds],
      rest: { api: fake.apiUrl },
      shards: 1,
      shardCount: 2,
    });
    clients.push(shard0, shard1);
    const seen = { 0: [] as string[], 1: [] as string[] };
    for (const [id, client] of [shard0, shard1].entries()) {
      client.on(Events.InteractionCreate, (interaction) => {
        seen[id as 0 | 1].push(interaction.guildId ?? 'dm');
        if (interaction.isChatInputCommand()) void interaction.reply('pong');
      });
      const ready = once(client, Events.ClientReady);
      await client.login(fake.token);
      await ready;
    }
    const ids = [...fake.state.guilds.keys()];
    expect(new Set(shard0.guilds.cache.keys())).toEqual(new Set(ids.filter((id) => shardOf(id, 2) === 0)));
    expect(new Set(shard1.guilds.cache.keys())).toEqual(new Set(ids.filter((id) => shardOf(id, 2) === 1)));
    expect(shard0.guilds.cache.has(onShard0.id) && shard1.guilds.cache.has(onShard1.id)).toBe(true);
    expect(fake.gatewayShards.sort()).toEqual([
      [0, 2],
      [1, 2],
    ]);
    await fake.runCommand({ name: 'ping', userId: ALICE, guildId: onShard1.id });
    await fake.runCommand({ name: 'ping', userId: ALICE, guildId: onShard0.id });
    await fake.runCommand({ name: 'ping', userId: ALICE, guildId: null });
    expect(seen).toEqual({ 0: [onShard0.id, 'dm'], 1: [onShard1.id] });
  });

  it('closes IDENTIFY with 4011 when one shard would serve too many guilds, and 4010 for a bad shard', async () => {
    const small = await startFakeDiscord({ maxGuildsPerShard: 1 });
    try {
      small.addGuild({ id: snowflakeOnShard(0, 2) });
      small.addGuild({ id: snowflakeOnShard(0, 2) });
      const identify = async (shard: [number, number]) => {
        const socket = new WebSocket(small.gatewayUrl);
        await once(socket, 'message');
        socket.send(JSON.stringify({ op: 2, d: { token: small.token, intents: 1, shard, properties: {} } }));
        return new Promise<string>((resolve) => {
          socket.on('close', (code) => resolve(`closed ${code}`));
          socket.on('message', (raw) => {
            if (JSON.parse(String(raw)).t === 'READY') {
              resolve('ready');
              socket.terminate();
            }
          });
        });
      };
      expect(await identify([0, 1])).toBe('closed 4011');
      expect(await identify([2, 2])).toBe('closed 4010');
      expect(await identify([1, 2])).toBe('ready');
    } finally {
      await small.close();
    }
  });

  it('answers op 8 so guild.members.fetch() returns every member', async () => {
    const { client } = await startBot();
    const members = await client.guilds.cache.get(guild.id)?.members.fetch();
    expect(members?.has(ALICE)).toBe(true);
    expect(members?.size).toBe(guild.members.size);
  });
});

describe('interactions', () => {
  it('captures a reply with its embed', async () => {
    await startBot(async (interaction) => {
      if (!interaction.isChatInputCommand()) return;
      const name = interaction.options.getString('name', true);
      await interaction.reply({
        embeds: [new EmbedBuilder().setTitle(`Profile of ${name}`).setColor(0x00ff00)],
      });
    });
    const result = await fake.runCommand({
      name: 'profile',
      userId: ALICE,
      options: [{ name: 'name', type: ApplicationCommandOptionType.String, value: 'vitalik.eth' }],
    });
    expect(result.callbacks.map((c) => c.type)).toEqual([4]);
    expect(result.message?.embeds[0]?.title).toBe('Profile of vitalik.eth');
    expect(result.message?.embeds[0]?.color).toBe(0x00ff00);
    expect(result.ephemeral).toBe(false);
    expect(result.ackMs).toBeGreaterThanOrEqual(0);
    expect(result.doneMs).toBeGreaterThanOrEqual(result.ackMs);
    expect(fake.state.messages.get(result.message?.id ?? '')?.embeds).toHaveLength(1);
  });

  it('follows a deferred reply to its edit, and flags ephemeral deferrals', async () => {
    await startBot(async (interaction) => {
      if (!interaction.isChatInputCommand()) return;
      await interaction.deferReply({ flags: 'Ephemeral' });
      await interaction.editReply({ content: 'done thinking' });
    });
    const result = await fake.runCommand({ name: 'slow', userId: ALICE });
    expect(result.callbacks.map((c) => c.type)).toEqual([5]);
    expect(result.message?.content).toBe('done thinking');
    expect(result.ephemeral).toBe(true);
    expect((result.message?.flags ?? 0) & 128).toBe(0);
    expect(fake.requests.some((r) => r.method === 'PATCH' && r.path.endsWith('/messages/@original'))).toBe(
      true,
    );
  });

  it('treats the first follow-up after a deferral as the reply, later ones as follow-ups', async () => {
    await startBot(async (interaction) => {
      if (!interaction.isChatInputCommand()) return;
      await interaction.deferReply();
      await interaction.followUp('first');
      await interaction.followUp('second');
    });
    const result = await fake.runCommand({ name: 'slow', userId: ALICE });
    expect(result.message?.content).toBe('first');
    await fake.waitForRequest(
      (r) =>
        r.method === 'POST' &&
        r.path.startsWith('/webhooks/') &&
        r.body !== null &&
        (r.body as { content?: string }).content === 'second',
    );
    expect(result.followUps.map((m) => m.content)).toEqual(['second']);
  });

  it('plays a select-menu click that the bot answers with update', async () => {
    await startBot(async (interaction) => {
      if (interaction.isChatInputCommand()) {
        const menu = new StringSelectMenuBuilder()
          .setCustomId('pick')
          .addOptions({ label: 'ENS', value: 'ens' }, { label: 'Farcaster', value: 'farcaster' });
        await interaction.reply({
          content: 'choose',
          components: [new ActionRowBuilder<StringSelectMenuBuilder>().addComponents(menu)],
        });
      } else if (interaction.isStringSelectMenu()) {
        await interaction.update({
          content: `picked ${interaction.values.join(',')} by ${interaction.user.username}`,
          components: [],
        });
      }
    });
    const reply = await fake.runCommand({ name: 'choose', userId: ALICE });
    expect(reply.message).not.toBeNull();
    if (!reply.message) return;
    const click = await fake.clickComponent({
      message: reply.message,
      customId: 'pick',
      values: ['farcaster'],
      userId: ALICE,
    });
    expect(click.callbacks.map((c) => c.type)).toEqual([7]);
    expect(click.message?.id).toBe(reply.message.id);
    expect(click.message?.content).toBe('picked farcaster by alice');
    expect(fake.state.messages.get(reply.message.id)?.components).toEqual([]);
    await expect(
      fake.clickComponent({ message: reply.message, customId: 'pick', values: ['ens'], userId: ALICE }),
    ).rejects.toThrow(/no component/);
  });

  it('rejects a click with a value the menu does not offer', async () => {
    await startBot(async (interaction) => {
      if (!interaction.isChatInputCommand()) return;
      const menu = new StringSelectMenuBuilder()
        .setCustomId('pick')
        .addOptions({ label: 'ENS', value: 'ens' });
      await interaction.reply({
        components: [new ActionRowBuilder<StringSelectMenuBuilder>().addComponents(menu)],
      });
    });
    const reply = await fake.runCommand({ name: 'choose', userId: ALICE });
    if (!reply.message) throw new Error('no reply');
    await expect(
      fake.clickComponent({ message: reply.message, customId: 'pick', values: ['lens'], userId: ALICE }),
    ).rejects.toThrow(/no option/);
  });

  it('resolves user options and user context menus', async () => {
    const seen: string[] = [];
    await startBot(async (interaction) => {
      if (interaction.isUserContextMenuCommand()) {
        seen.push(`menu:${interaction.targetUser.username}:${interaction.targetMember ? 'member' : 'none'}`);
        await interaction.reply('ok');
      } else if (interaction.isChatInputCommand()) {
        const user = interaction.options.getUser('who', true);
        seen.push(`option:${user.username}:${interaction.memberPermissions?.has('ManageRoles')}`);
        await interaction.reply('ok');
      }
    });
    await fake.runCommand({
      name: 'whois',
      userId: ALICE,
      memberPermissions: 1n << 28n,
      options: [{ name: 'who', type: ApplicationCommandOptionType.User, value: fake.botUserId }],
    });
    await fake.runCommand({ name: 'Show profile', type: 'user', targetId: ALICE, userId: ALICE });
    expect(seen).toEqual(['option:web3bio-bot:true', 'menu:alice:member']);
  });

  it("carries the member's permissions in the channel, overwrites included; the client caches the overwrites", async () => {
    const ticket = fake.addGuild({ name: 'Tickets', channelNames: ['general', 'ticket-7'] });
    fake.addMember(ticket.id, { id: ALICE, username: 'alice' });
    const [general, ticketChannel] = [...ticket.channels.keys()];
    if (!general || !ticketChannel) throw new Error('no channels');
    const seen: string[] = [];
    const { client } = await startBot(async (interaction) => {
      if (!interaction.isChatInputCommand()) return;
      const where = interaction.channelId === ticketChannel ? 'ticket' : 'general';
      seen.push(`${where}:${interaction.memberPermissions?.has('ManageRoles')}`);
      await interaction.reply('ok');
    });
    fake.setChannelOverwrite(ticket.id, ticketChannel, {
      id: ALICE,
      type: 'member',
      allow: PermissionFlagsBits.ManageRoles,
    });
    const cached = () => client.guilds.cache.get(ticket.id)?.channels.cache.get(ticketChannel);
    await waitUntil(() => {
      const channel = cached();
      return (
        channel !== undefined &&
        'permissionOverwrites' in channel &&
        channel.permissionOverwrites.cache.has(ALICE)
      );
    });
    await fake.runCommand({ name: 'whois', guildId: ticket.id, channelId: general, userId: ALICE });
    await fake.runCommand({ name: 'whois', guildId: ticket.id, channelId: ticketChannel, userId: ALICE });
    expect(seen).toEqual(['general:false', 'ticket:true']);
    const payload = fake.buildCommandInteraction({
      name: 'whois',
      guildId: ticket.id,
      channelId: ticketChannel,
      userId: ALICE,
    });
    expect(BigInt(payload.app_permissions) & PermissionFlagsBits.SendMessages).toBe(
      PermissionFlagsBits.SendMessages,
    );
    // Removed: the channel gives her nothing more than her roles do.
    fake.setChannelOverwrite(ticket.id, ticketChannel, { id: ALICE, type: 'member' });
    const again = fake.buildCommandInteraction({
      name: 'whois',
      guildId: ticket.id,
      channelId: ticketChannel,
      userId: ALICE,
    });
    expect(BigInt(again.member?.permissions ?? '0') & PermissionFlagsBits.ManageRoles).toBe(0n);
  });

  it('passes on a crafted click whose custom_id the message does not carry (the default refuses it)', async () => {
    const clicked: string[] = [];
    await startBot(async (interaction) => {
      if (interaction.isChatInputCommand()) {
        const button = new ButtonBuilder().setCustomId('real').setLabel('Real').setStyle(ButtonStyle.Primary);
        await interaction.reply({
          components: [new ActionRowBuilder<ButtonBuilder>().addComponents(button)],
        });
      } else if (interaction.isButton()) {
        clicked.push(interaction.customId);
        await interaction.deferUpdate();
      }
    });
    const reply = await fake.runCommand({ name: 'menu', userId: ALICE });
    if (!reply.message) throw new Error('no reply');
    await expect(
      fake.clickComponent({ message: reply.message, customId: 'forged', userId: ALICE }),
    ).rejects.toThrow(/no component/);
    await fake.clickComponent({
      message: reply.message,
      customId: 'forged',
      userId: ALICE,
      crafted: true,
      until: 'ack',
    });
    expect(clicked).toEqual(['forged']);
  });

  it('plays commands in a DM', async () => {
    fake.addUser({ id: '200000000000000002', username: 'dm-user' });
    let inGuild: boolean | undefined;
    await startBot(async (interaction) => {
      if (!interaction.isChatInputCommand()) return;
      inGuild = interaction.inGuild();
      await interaction.reply(`hi ${interaction.user.username}`);
    });
    const result = await fake.runCommand({ name: 'ping', userId: '200000000000000002', guildId: null });
    expect(inGuild).toBe(false);
    expect(result.message?.content).toBe('hi dm-user');
  });

  it('uploads files as multipart and resolves attachment:// in embeds', async () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]);
    await startBot(async (interaction) => {
      if (!interaction.isChatInputCommand()) return;
      await interaction.reply({
        files: [{ attachment: png, name: 'card.png' }],
        embeds: [{ title: 'card', image: { url: 'attachment://card.png' } }],
      });
    });
    const result = await fake.runCommand({ name: 'card', userId: ALICE });
    const attachment = result.message?.attachments[0];
    expect(attachment?.filename).toBe('card.png');
    expect(result.message?.embeds[0]?.image?.url).toBe(attachment?.url);
    const served = await fetch(attachment?.url ?? '');
    expect(Buffer.from(await served.arrayBuffer())).toEqual(png);
    expect(fake.requests.find((r) => r.path.endsWith('/callback'))?.files[0]?.filename).toBe('card.png');
  });

  it("refuses a file above the interaction's attachment limit with 413 (40005), as Discord does", async () => {
    const errors: unknown[] = [];
    await startBot(async (interaction) => {
      if (!interaction.isChatInputCommand()) return;
      await interaction.deferReply();
      await interaction
        .editReply({ files: [{ attachment: Buffer.alloc(2_000, 1), name: 'big.bin' }] })
        .catch((error: unknown) => errors.push(error));
      await interaction.editReply({ files: [{ attachment: Buffer.alloc(1_000, 1), name: 'fits.bin' }] });
    });
    const result = await fake.runCommand({ name: 'export', userId: ALICE, attachmentSizeLimit: 1_000 });
    expect(errors).toEqual([expect.objectContaining({ status: 413, code: 40_005 })]);
    expect(result.message?.attachments.map((a) => a.filename)).toEqual(['fits.bin']);
  });

  it('records who a message would ping, honouring allowed_mentions', async () => {
    await startBot(async (interaction) => {
      if (!interaction.isChatInputCommand()) return;
      await interaction.reply({ content: `<@${ALICE}> @everyone`, allowedMentions: { parse: [] } });
      await interaction.followUp({ content: `<@${ALICE}>` });
    });
    const result = await fake.runCommand({ name: 'ping', userId: ALICE });
    expect(result.message?.mentions).toEqual([]);
    expect(result.message?.mention_everyone).toBe(false);
    await fake.waitForRequest((r) => r.path.startsWith('/webhooks/') && r.status === 200);
    expect(result.followUps[0]?.mentions.map((u) => u.id)).toEqual([ALICE]);
  });

  it('answers an embed over Discord limits with 50035, which the bot sees as DiscordAPIError', async () => {
    const failures: unknown[] = [];
    await startBot(async (interaction) => {
      if (!interaction.isChatInputCommand()) return;
      await interaction
        .reply({ embeds: [{ description: 'x'.repeat(4097), url: 'javascript:alert(1)' }] })
        .catch((error: unknown) => {
          failures.push(error);
        });
    });
    await expect(fake.runCommand({ name: 'big', userId: ALICE, timeoutMs: 200 })).rejects.toThrow(
      /no complete response/,
    );
    expect(failures[0]).toBeInstanceOf(DiscordAPIError);
    expect((failures[0] as DiscordAPIError).code).toBe(50_035);
    const raw = (failures[0] as DiscordAPIError).rawError as unknown as {
      errors: { embeds: Record<string, Record<string, unknown>> };
    };
    expect(Object.keys(raw.errors.embeds['0'] ?? {}).sort()).toEqual(['description', 'url']);
  });

  it('refuses a second acknowledgement with 40060', async () => {
    const { promise: secondCode, resolve } = Promise.withResolvers<number>();
    await startBot(async (interaction) => {
      if (!interaction.isChatInputCommand()) return;
      await interaction.reply('one');
      // discord.js refuses a second reply itself, so go around it to see the server's answer.
      const raw = await fetch(
        `${fake.apiUrl}/v10/interactions/${interaction.id}/${interaction.token}/callback`,
        {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ type: 4, data: { content: 'two' } }),
        },
      );
      resolve(((await raw.json()) as { code: number }).code);
    });
    const result = await fake.runCommand({ name: 'ping', userId: ALICE });
    expect(await secondCode).toBe(40_060);
    expect(result.message?.content).toBe('one');
  });

  it('answers callbacks after the deadline with 10062 Unknown interaction', async () => {
    await fake.close();
    fake = await startFakeDiscord({ interactionAckDeadlineMs: 0 });
    guild = fake.addGuild();
    fake.addMember(guild.id, { id: ALICE, username: 'alice' });
    const failures: unknown[] = [];
    await startBot(async (interaction) => {
      if (interaction.isChatInputCommand())
        await interaction.reply('late').catch((error: unknown) => failures.push(error));
    });
    await expect(fake.runCommand({ name: 'ping', userId: ALICE, timeoutMs: 200 })).rejects.toThrow();
    expect((failures[0] as DiscordAPIError).code).toBe(10_062);
  });

  it('plays a modal: shown by a command, submitted with checked inputs, answered with a reply', async () => {
    const modal = {
      custom_id: 'link',
      title: 'Link a wallet',
      components: [
        {
          type: 1,
          components: [{ type: 4, custom_id: 'address', label: 'Address', style: 1, max_length: 42 }],
        },
        { type: 1, components: [{ type: 4, custom_id: 'note', label: 'Note', style: 2, required: false }] },
      ],
    };
    await startBot(async (interaction) => {
      if (interaction.isChatInputCommand()) await interaction.showModal(modal);
      else if (interaction.isModalSubmit()) {
        await interaction.reply({
          content: `linked ${interaction.fields.getTextInputValue('address')}`,
          flags: 'Ephemeral',
        });
      }
    });
    const opened = await fake.runCommand({ name: 'link', userId: ALICE });
    expect(opened.callbacks.map((c) => c.type)).toEqual([9]);
    expect(opened.callbacks[0]?.data.title).toBe('Link a wallet');
    expect(opened.message).toBeNull();
    await expect(fake.submitModal({ opened, fields: { address: '' } })).rejects.toThrow(/required/);
    await expect(fake.submitModal({ opened, fields: { address: '0x1', extra: 'x' } })).rejects.toThrow(
      /no input/,
    );
    const submitted = await fake.submitModal({
      opened,
      fields: { address: '0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045' },
    });
    expect(submitted.message?.content).toBe('linked 0xd8dA6BF26964aF9D7eEd9e03E53415D37aA96045');
    expect(submitted.ephemeral).toBe(true);
  });

  it('follows deferUpdate to the edit of the clicked message, or resolves at the ack with until: ack', async () => {
    await startBot(async (interaction) => {
      if (interaction.isChatInputCommand()) {
        const row = new ActionRowBuilder<ButtonBuilder>().addComponents(
          new ButtonBuilder().setCustomId('refresh').setLabel('Refresh').setStyle(ButtonStyle.Primary),
          new ButtonBuilder().setCustomId('ack-only').setLabel('Ack').setStyle(ButtonStyle.Secondary),
        );
        await interaction.reply({ content: 'v1', components: [row] });
      } else if (interaction.isButton()) {
        await interaction.deferUpdate();
        if (interaction.customId === 'refresh') await interaction.editReply({ content: 'v2' });
      }
    });
    const reply = await fake.runCommand({ name: 'panel', userId: ALICE });
    if (!reply.message) throw new Error('no reply');
    const refreshed = await fake.clickComponent({
      message: reply.message,
      customId: 'refresh',
      userId: ALICE,
    });
    expect(refreshed.callbacks.map((c) => c.type)).toEqual([6]);
    expect(refreshed.message?.id).toBe(reply.message.id);
    expect(fake.state.messages.get(reply.message.id)?.content).toBe('v2');
    const acked = await fake.clickComponent({
      message: reply.message,
      customId: 'ack-only',
      userId: ALICE,
      until: 'ack',
    });
    expect(acked.callbacks.map((c) => c.type)).toEqual([6]);
    expect(acked.message).toBeNull();
  });
});

describe('REST', () => {
  it('adds a role with an audit reason, updates state and dispatches GUILD_MEMBER_UPDATE', async () => {
    const role = fake.addRole(guild.id, { name: 'verified-human' });
    const { client } = await startBot();
    const updated = once(client, Events.GuildMemberUpdate);
    const member = await client.guilds.cache.get(guild.id)?.members.fetch(ALICE);
    await member?.roles.add(role.id, 'Web3.bio: isHuman credential');
    expect(guild.members.get(ALICE)?.roles).toEqual([role.id]);
    expect(fake.state.auditLog.at(-1)).toMatchObject({
      userId: ALICE,
      action: 'member_role_add',
      reason: 'Web3.bio: isHuman credential',
    });
    const put = await fake.waitForRequest(
      (r) => r.method === 'PUT' && r.path === `/guilds/${guild.id}/members/${ALICE}/roles/${role.id}`,
    );
    expect(put.status).toBe(204);
    expect(decodeURIComponent(put.headers['x-audit-log-reason'] ?? '')).toBe('Web3.bio: isHuman credential');
    const [, after] = await updated;
    expect(after.roles.cache.has(role.id)).toBe(true);
    await member?.roles.remove(role.id);
    expect(guild.members.get(ALICE)?.roles).toEqual([]);
  });

  it('honours a 429: discord.js retries after retry_after', async () => {
    const role = fake.addRole(guild.id, { name: 'holder' });
    const { client } = await startBot();
    fake.addFault({ method: 'PUT', path: /\/roles\//, status: 429, body: { retry_after: 0.3 } });
    const member = await client.guilds.cache.get(guild.id)?.members.fetch(ALICE);
    await member?.roles.add(role.id);
    const puts = fake.requests.filter((r) => r.method === 'PUT');
    expect(puts.map((r) => r.status)).toEqual([429, 204]);
    expect((puts[1]?.at ?? 0) - (puts[0]?.at ?? 0)).toBeGreaterThanOrEqual(290);
    expect(guild.members.get(ALICE)?.roles).toEqual([role.id]);
  });

  it('limits role edits per guild like a Discord bucket, and discord.js paces itself', async () => {
    const roles = [1, 2, 3].map((n) => fake.addRole(guild.id, { name: `r${n}` }));
    const { client } = await startBot();
    fake.limitRoleEdits(guild.id, 2);
    const member = await client.guilds.cache.get(guild.id)?.members.fetch(ALICE);
    const started = Date.now();
    for (const role of roles) await member?.roles.add(role.id);
    expect(Date.now() - started).toBeGreaterThanOrEqual(500);
    expect(guild.members.get(ALICE)?.roles.sort()).toEqual(roles.map((r) => r.id).sort());
    const puts = fake.requests.filter((r) => r.method === 'PUT');
    expect(puts.filter((r) => r.status === 204)).toHaveLength(3);
  });

  it('answers 50013 for a role above the bot or managed, and 10011/10007 for unknown ids', async () => {
    const above = fake.addRole(guild.id, { name: 'admin', position: 50 });
    const { client } = await startBot();
    const cachedGuild = client.guilds.cache.get(guild.id);
    const member = await cachedGuild?.members.fetch(ALICE);
    const codeOf = (promise: Promise<unknown> | undefined) =>
      (promise ?? Promise.resolve()).then(
        () => null,
        (error: unknown) => (error instanceof DiscordAPIError ? error.code : String(error)),
      );
    expect(await codeOf(member?.roles.add(above.id))).toBe(50_013);
    expect(await codeOf(member?.roles.add(guild.botRoleId))).toBe(50_013);
    expect(await codeOf(member?.roles.add('123456789012345678'))).toBe(10_011);
    expect(await codeOf(cachedGuild?.members.addRole({ user: '999999999999999999', role: above.id }))).toBe(
      10_007,
    );
    expect(guild.members.get(ALICE)?.roles).toEqual([]);
  });

  it('edits member roles with PATCH, checking every changed role', async () => {
    const low = fake.addRole(guild.id, { name: 'low' });
    const high = fake.addRole(guild.id, { name: 'high', position: 99 });
    const { client } = await startBot();
    const member = await client.guilds.cache.get(guild.id)?.members.fetch(ALICE);
    await member?.roles.set([low.id], 'sync');
    expect(guild.members.get(ALICE)?.roles).toEqual([low.id]);
    await expect(member?.roles.set([low.id, high.id])).rejects.toMatchObject({ code: 50_013 });
    expect(fake.state.auditLog.at(-1)).toMatchObject({ action: 'member_update', reason: 'sync' });
  });

  it('lists members with limit/after in id order', async () => {
    fake.addMember(guild.id, { id: '200000000000000003', username: 'carol' });
    const { client } = await startBot();
    const page = await client.guilds.cache
      .get(guild.id)
      ?.members.list({ limit: 2, after: '200000000000000001' });
    expect([...(page?.keys() ?? [])]).toEqual(
      ['200000000000000003', fake.botUserId].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1)).slice(0, 2),
    );
  });

  it('stores registered commands with stable ids and uses them in interactions', async () => {
    let commandId: string | undefined;
    const { client } = await startBot(async (interaction) => {
      if (!interaction.isChatInputCommand()) return;
      commandId = interaction.commandId;
      await interaction.reply('ok');
    });
    const definitions: RESTPostAPIApplicationCommandsJSONBody[] = [
      {
        name: 'profile',
        description: 'Show a profile',
        options: [{ name: 'id', description: 'identity', type: ApplicationCommandOptionType.String }],
      },
      { name: 'Show profile', type: ApplicationCommandType.User },
    ];
    const first = await client.application?.commands.set(definitions);
    const second = await client.application?.commands.set(definitions);
    expect([...(second?.keys() ?? [])]).toEqual([...(first?.keys() ?? [])]);
    expect(fake.state.commands.global.map((c) => c.name)).toEqual(['profile', 'Show profile']);
    await client.application?.commands.set([{ name: 'dev', description: 'dev only' }], guild.id);
    expect(fake.state.commands.guilds.get(guild.id)?.[0]?.guild_id).toBe(guild.id);
    await fake.runCommand({ name: 'profile', userId: ALICE });
    expect(commandId).toBe(fake.state.commands.global[0]?.id);
    await expect(
      client.application?.commands.set([{ name: 'Bad Name', description: 'x' }]),
    ).rejects.toMatchObject({ code: 50_035 });
    const localized = (description_localizations: Record<string, string>) =>
      client.application?.commands.set([{ name: 'loc', description: 'x', description_localizations }]);
    await expect(localized({ de: 'ja', ja: 'はい' })).resolves.toBeDefined();
    await expect(localized({ 'xx-YY': 'x' })).rejects.toMatchObject({ code: 50_035 });
    await expect(localized({ de: 'x'.repeat(101) })).rejects.toMatchObject({ code: 50_035 });
  });

  it('answers 401 without the bot token and records unknown routes as 404', async () => {
    const anonymous = await fetch(`${fake.apiUrl}/v10/users/@me`);
    expect(anonymous.status).toBe(401);
    const unknown = await fetch(`${fake.apiUrl}/v10/nowhere`, {
      headers: { authorization: `Bot ${fake.token}` },
    });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ code: 0 });
    expect(fake.requests.map((r) => [r.path, r.status])).toEqual([
      ['/users/@me', 401],
      ['/nowhere', 404],
    ]);
  });

  it('stores channel messages the bot sends', async () => {
    const { client } = await startBot();
    const channel = await client.channels.fetch(guild.textChannelId);
    if (!channel?.isSendable()) throw new Error('channel not sendable');
    const sent = await channel.send({ content: 'gm' });
    expect(fake.state.messages.get(sent.id)?.content).toBe('gm');
    await sent.edit('gn');
    expect(fake.state.messages.get(sent.id)?.content).toBe('gn');
  });

  it('fails matching requests with addFault, then recovers', async () => {
    fake.addFault({ path: /^\/users\/@me$/, status: 403, body: { message: 'Missing Access', code: 50_001 } });
    const headers = { authorization: `Bot ${fake.token}` };
    expect((await fetch(`${fake.apiUrl}/v10/users/@me`, { headers })).status).toBe(403);
    expect((await fetch(`${fake.apiUrl}/v10/users/@me`, { headers })).status).toBe(200);
    expect(fake.requests.map((r) => r.fault)).toEqual([true, false]);
  });
});
