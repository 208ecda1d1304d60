import type { Config } from '../src/app/config.ts';
import type { Command } from '../src/discord/command.ts';
import avatar from './avatar.ts';
import checkCredentials from './checkCredentials.ts';
import creds from './creds.ts';
import domain from './domain.ts';
import forgetLookups from './forgetLookups.ts';
import gating from './gating.ts';
import messageIdentities from './messageIdentities.ts';
import unverify from './unverify.ts';
import verify from './verify.ts';
import wallet from './wallet.ts';
import whoami from './whoami.ts';
import whois from './whois.ts';

/** The lookup commands every deployment has (and /forget-lookups, which clears what they remember). */
export const LOOKUP_COMMANDS: readonly Command[] = [
  whois,
  avatar,
  creds,
  domain,
  wallet,
  messageIdentities,
  forgetLookups,
];

/** The role-gating commands, registered only when GATING_ENABLED. */
export const GATING_COMMANDS: readonly Command[] = [verify, unverify, whoami, gating, checkCredentials];

/** With Linked Roles alone (no role gating): a member's connection shows in /whoami and /unverify clears it. */
export const LINKED_ROLE_COMMANDS: readonly Command[] = [unverify, whoami];

/** The one registry: the router and the deploy script both read it. */
export function commandsFor(
  config: Pick<Config, 'GATING_ENABLED'> & Partial<Pick<Config, 'LINKED_ROLES_ENABLED'>>,
): readonly Command[] {
  if (config.GATING_ENABLED) return [...LOOKUP_COMMANDS, ...GATING_COMMANDS];
  return config.LINKED_ROLES_ENABLED ? [...LOOKUP_COMMANDS, ...LINKED_ROLE_COMMANDS] : LOOKUP_COMMANDS;
}
