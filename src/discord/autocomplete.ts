/** The router's answer to autocomplete: suggestions at once (it cannot be deferred). */
import type { APIInteraction, InteractionType } from 'discord-api-types/v10';
import { focusedOption, installedGuildId, localeOf, readOptions } from './apiInteraction.ts';
import { identityOptionNames } from './command.ts';
import { suggestIdentities } from './identitySuggestions.ts';
import type { Responder } from './responder.ts';
import { commandContext, type RouterDeps, renderContext, userIdOf } from './routerDeps.ts';

export type AutocompleteInteraction = Extract<
  APIInteraction,
  { type: InteractionType.ApplicationCommandAutocomplete }
>;

/** Suggestions for the option being typed: the command's own suggester, or the identities for an identity option. */
export async function autocomplete(
  router: RouterDeps,
  interaction: AutocompleteInteraction,
  responder: Responder,
): Promise<void> {
  const { deps } = router;
  const started = performance.now();
  const command = router.byName.get(interaction.data.name);
  const focused = focusedOption(interaction.data.options);
  const suggest = focused ? command?.suggest?.[focused.name] : undefined;
  const choices = !focused
    ? []
    : suggest
      ? await suggest(
          focused.value,
          readOptions(interaction.data.options),
          commandContext(deps, interaction, renderContext(deps, localeOf(interaction))),
        )
      : command && identityOptionNames(command).includes(focused.name)
        ? await suggestIdentities(
            deps,
            { userId: userIdOf(interaction), guildId: installedGuildId(interaction) },
            focused.value,
          )
        : [];
  await responder.suggest(choices);
  const name = `${interaction.data.name}:autocomplete`;
  router.onAnswered?.({ name, outcome: 'ok', ms: performance.now() - started });
}
