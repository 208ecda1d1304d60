import type { APIApplicationCommandInteractionDataOption } from 'discord-api-types/v10';
import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import { describe, expect, it } from 'vitest';
import { commandsFor } from '../../commands/index.ts';
import whois from '../../commands/whois.ts';
import { loadConfig } from '../../src/app/config.ts';
import {
  carriesCustomId,
  focusedOption,
  installedGuildId,
  modalFields,
  readOptions,
} from '../../src/discord/apiInteraction.ts';
import {
  coerceOptions,
  identityOption,
  isPrivate,
  stringOption,
  withFreshness,
} from '../../src/discord/command.ts';
import { Cooldown } from '../../src/discord/cooldown.ts';
import { CUSTOM_ID_MAX, decodeCustomId, encodeCustomId } from '../../src/discord/customId.ts';
import { MAX_IDENTITY_LENGTH } from '../../src/web3bio/identity.ts';

describe('Cooldown', () => {
  it('allows `limit` uses per window, then says how long to wait', () => {
    let now = 1_000;
    const cooldown = new Cooldown({ limit: 2, windowMs: 10_000, now: () => now });
    expect(cooldown.take('u1')).toBe(0);
    now += 1_000;
    expect(cooldown.take('u1')).toBe(0);
    now += 1_000;
    expect(cooldown.take('u1')).toBe(8_000);
    expect(cooldown.take('u2')).toBe(0);
    now += 8_000;
    expect(cooldown.take('u1')).toBe(0);
  });

  it('a limit of 0 disables it', () => {
    const cooldown = new Cooldown({ limit: 0, windowMs: 1_000 });
    for (let i = 0; i < 100; i++) expect(cooldown.take('u')).toBe(0);
  });
});

describe('custom ids', () => {
  it('round-trips command, handler and args', () => {
    const id = encodeCustomId('whois', 'select', 'ens', 'vitalik.eth');
    expect(id).toBe('whois|select|ens|vitalik.eth');
    expect(decodeCustomId(id ?? '')).toEqual({
      command: 'whois',
      handler: 'select',
      args: ['ens', 'vitalik.eth'],
    });
  });

  it('keeps args too long for Discord’s limit server-side, under a short stable key, never truncating', () => {
    const long = `${'a'.repeat(MAX_IDENTITY_LENGTH - 4)}.eth`;
    const ids = [0, 1].map((page) => encodeCustomId('wallet', 'page', page, long));
    expect(ids[0]).toMatch(/^wallet\|page\|0\|~[\w-]{22}$/);
    expect(new Set(ids).size).toBe(2);
    for (const id of ids) expect(id.length).toBeLessThanOrEqual(CUSTOM_ID_MAX);
    expect(encodeCustomId('wallet', 'page', 0, long)).toBe(ids[0]);
    expect(decodeCustomId(ids[1] ?? '')).toEqual({ command: 'wallet', handler: 'page', args: ['1', long] });
    expect(decodeCustomId('nohandler')).toBeNull();
  });

  it('keeps args that could be misread (with | or a leading ~), and says when a kept arg is gone', () => {
    for (const arg of ['a|b', '~x']) {
      const id = encodeCustomId('whois', 'select', '', arg);
      expect(id.split('|')).toHaveLength(4);
      expect(decodeCustomId(id)).toEqual({ command: 'whois', handler: 'select', args: ['', arg] });
    }
    expect(decodeCustomId(`whois|select||~${'0'.repeat(22)}`)).toEqual({
      command: 'whois',
      handler: 'select',
      expired: true,
    });
  });
});

describe('carriesCustomId', () => {
  it('finds an id in action rows, Components V2 containers, sections and their accessories', () => {
    const message = {
      components: [
        {
          type: 1,
          components: [
            { type: 2, custom_id: 'row|button' },
            { type: 2, url: 'https://x.test' },
          ],
        },
        {
          type: 17,
          components: [
            { type: 10, content: 'text' },
            {
              type: 9,
              components: [{ type: 10, content: 'a' }],
              accessory: { type: 2, custom_id: 'section|accessory' },
            },
            { type: 1, components: [{ type: 3, custom_id: 'container|select', options: [] }] },
          ],
        },
      ],
    };
    for (const id of ['row|button', 'section|accessory', 'container|select'])
      expect(carriesCustomId(message, id), id).toBe(true);
    for (const id of ['row', 'whoami|sign|0xdead', '', 'https://x.test'])
      expect(carriesCustomId(message, id), id).toBe(false);
    expect(carriesCustomId({}, 'row|button')).toBe(false);
    expect(carriesCustomId({ components: [null, 'x', { custom_id: 7 }] as unknown[] }, '7')).toBe(false);
  });
});

describe('options', () => {
  it('readOptions flattens subcommands and their options', () => {
    const data = [
      {
        name: 'setup',
        type: ApplicationCommandOptionType.Subcommand,
        options: [
          { name: 'human-role', type: ApplicationCommandOptionType.Role, value: '42' },
          { name: 'min-score', type: ApplicationCommandOptionType.Number, value: 20 },
        ],
      },
    ] as APIApplicationCommandInteractionDataOption[];
    expect(readOptions(data)).toEqual({ subcommand: 'setup', 'human-role': '42', 'min-score': 20 });
  });

  it('focusedOption finds the option being typed, inside a subcommand too', () => {
    const data = [
      {
        name: 'rule',
        type: ApplicationCommandOptionType.Subcommand,
        options: [
          { name: 'role', type: ApplicationCommandOptionType.Role, value: '42' },
          { name: 'kind', type: ApplicationCommandOptionType.String, value: 'fol', focused: true },
        ],
      },
    ] as APIApplicationCommandInteractionDataOption[];
    expect(focusedOption(data)).toEqual({ name: 'kind', value: 'fol' });
    expect(focusedOption([])).toBeNull();
  });

  it('modalFields reads text inputs in action rows and in labels', () => {
    const fields = modalFields([
      { type: 1, components: [{ type: 4, custom_id: 'identity', value: 'vitalik.eth' }] },
      { type: 18, component: { type: 4, custom_id: 'note', value: 'hi' } },
      { type: 1, components: [{ type: 3, custom_id: 'select', values: ['a'] }] },
    ]);
    expect(fields).toEqual({ identity: 'vitalik.eth', note: 'hi' });
  });

  it('installedGuildId is the server only when that server installed the app', () => {
    expect(installedGuildId({ guild_id: '1', authorizing_integration_owners: { 0: '1', 1: '9' } })).toBe('1');
    expect(installedGuildId({ guild_id: '1', authorizing_integration_owners: { 1: '9' } })).toBeNull();
    expect(installedGuildId({ authorizing_integration_owners: { 0: '0', 1: '9' } })).toBeNull();
  });

  it('coerceOptions types preview text by the command’s own definitions', () => {
    expect(coerceOptions(whois, { identity: 'vitalik.eth', private: 'true' })).toEqual({
      identity: 'vitalik.eth',
      private: true,
    });
    expect(() => coerceOptions(whois, { nope: 'x' })).toThrow(/no option "nope"/);
  });

  it('every identity or name option is identityOption(): a string of at most MAX_IDENTITY_LENGTH', () => {
    expect(identityOption('commands.domain.options.name', { name: 'name', required: false })).toEqual({
      type: ApplicationCommandOptionType.String,
      name: 'name',
      description: 'e.g. vitalik.eth, tony.base.eth, bonfida.sol',
      description_localizations: expect.any(Object),
      required: false,
      max_length: MAX_IDENTITY_LENGTH,
      autocomplete: true,
    });
    const config = loadConfig({
      DISCORD_TOKEN: 't',
      DISCORD_APPLICATION_ID: '100000000000000001',
      GATING_ENABLED: 'true',
      PUBLIC_URL: 'https://bot.example',
    });
    const identityOptions = commandsFor(config).flatMap((c) =>
      ('options' in c.data ? (c.data.options ?? []) : []).filter(
        (o) => o.name === 'identity' || (c.data.name === 'domain' && o.name === 'name'),
      ),
    );
    expect(identityOptions).toHaveLength(7);
    for (const option of identityOptions)
      expect(option).toMatchObject({ max_length: MAX_IDENTITY_LENGTH, autocomplete: true });
  });

  it('helpers read strings and the private flag', () => {
    expect(stringOption({ identity: 'x' }, 'identity')).toBe('x');
    expect(stringOption({ identity: 3 }, 'identity')).toBe('');
    expect(isPrivate({ private: true })).toBe(true);
    expect(isPrivate({ private: 'true' })).toBe(false);
  });

  it('withFreshness marks stale answers only', () => {
    const render = { locale: 'en-US', nowSec: 1, ipfsGateway: 'https://ipfs.io' };
    expect(withFreshness(render, { stale: false, fetchedAt: 5 })).toBe(render);
    expect(withFreshness(render, { stale: true, fetchedAt: 5 }).stale).toEqual({ fetchedAt: 5 });
  });
});
