/** What the router's steps share: built once by `createRouter`, handed to each step. */
import type { APIInteraction } from 'discord-api-types/v10';
import type { RenderContext } from '../render/types.ts';
import type { Outcome } from './answerTiming.ts';
import { actingUser, installedGuildId } from './apiInteraction.ts';
import type { BotDeps, Command, CommandContext } from './command.ts';
import type { Cooldown } from './cooldown.ts';

/** The fields of every log line about one interaction (its id, user, server, shard and command). */
export type LogFields = Record<string, unknown>;

export interface RouterDeps {
  deps: BotDeps;
  byName: ReadonlyMap<string, Command>;
  cooldown: Cooldown;
  /** DEFER_AFTER_MS: an answer not ready by then is deferred first. */
  deferAfterMs: number;
  /** The answer's log line and metrics (answerTiming.ts). */
  logOutcome: (base: LogFields, outcome: Outcome, started: number) => void;
  /** Told of every answer (metrics): the command, or `command:handler` for a component; `ok` or the error kind. */
  onAnswered?: (answer: { name: string; outcome: string; ms: number }) => void;
}

export function renderContext(deps: BotDeps, locale: string): RenderContext {
  return { locale, nowSec: Math.floor(Date.now() / 1_000), ipfsGateway: deps.config.IPFS_GATEWAY };
}

export function userIdOf(interaction: APIInteraction): string {
  return actingUser(interaction)?.id ?? '';
}

export function commandContext(
  deps: BotDeps,
  interaction: NonNullable<CommandContext['interaction']>,
  render: RenderContext,
): CommandContext {
  return { deps, render, userId: userIdOf(interaction), guildId: installedGuildId(interaction), interaction };
}
