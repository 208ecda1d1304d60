import { ApplicationCommandType } from 'discord-api-types/v10';
import { type Command, USER_INSTALLABLE } from '../src/discord/command.ts';
import { named } from '../src/i18n/index.ts';
import { type IdentityAnswer, renderMessageIdentities } from '../src/render/messageIdentities.ts';
import { findIdentitiesInText } from '../src/web3bio/identitiesInText.ts';
import { WHOIS_OPEN_ID } from './whois.ts';

export default {
  data: {
    ...named('commands.messageIdentities.name'),
    type: ApplicationCommandType.Message,
    ...USER_INSTALLABLE,
  },
  cooldown: true,
  ephemeral: true,
  async answer(_options, ctx) {
    const data = ctx.interaction?.data;
    const text =
      data && 'type' in data && data.type === ApplicationCommandType.Message
        ? (data.resolved.messages[data.target_id]?.content ?? '')
        : '';
    const found = findIdentitiesInText(text);
    const batchIds = found.flatMap((f) => (f.batchId ? [f.batchId] : []));
    // One batch request for all of them; ids Web3.bio does not know come back with `result: null`.
    const entries = batchIds.length > 0 ? await ctx.deps.web3bio.getProfilesBatch(batchIds) : [];
    const byId = new Map(entries.map((entry) => [entry.input, entry.result]));
    const answers: IdentityAnswer[] = found.map((f) => ({
      identity: f.identity,
      kind: f.kind,
      profile: f.batchId ? (byId.get(f.batchId) ?? null) : undefined,
    }));
    return renderMessageIdentities(answers, ctx.render, WHOIS_OPEN_ID);
  },
} satisfies Command;
