import type { Config } from '../src/config.ts';
import type { Command } from '../src/discord/command.ts';
import avatar from './avatar.ts';
import creds from './creds.ts';
import domain from './domain.ts';
import wallet from './wallet.ts';
import whois from './whois.ts';

/** The lookup commands every deployment has. */
export const LOOKUP_COMMANDS: readonly Command[] = [whois, avatar, creds, domain, wallet];

/** The one registry: the router and the deploy script both read it. */
export function commandsFor(_config: Pick<Config, 'GATING_ENABLED'>): readonly Command[] {
  return LOOKUP_COMMANDS;
}
