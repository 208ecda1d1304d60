import { ApplicationCommandOptionType } from 'discord-api-types/v10';
import { type Command, type CommandContext, identityOption } from '../src/discord/command.ts';
import { encodeCustomId } from '../src/discord/customId.ts';
import {
  GUILD_INSTALL_ONLY,
  GUILD_ONLY_CONTEXTS,
  gatingAccess,
  guildNames,
  invokerUsername,
} from '../src/discord/gatingContext.ts';
import { suggestIdentities } from '../src/discord/identitySuggestions.ts';
import { VERIFY_MODAL_IDS } from '../src/discord/verifyPanel.ts';
import { described, named } from '../src/i18n/index.ts';
import { renderProofChoices, renderProofGone, renderSharing } from '../src/render/accountProofs.ts';
import { renderVerifyResult } from '../src/render/gatingMember.ts';
import { renderVerifyModal } from '../src/render/gatingPanel.ts';
import type { MessagePayload } from '../src/render/types.ts';
import { MAX_IDENTITY_LENGTH } from '../src/web3bio/identity.ts';

/** "Use X here" (a proof by its subject), "Prove another identity" (the modal), and sharing turned on. */
export const PROOF_CHOICE_IDS = {
  use: (subject: string) => encodeCustomId('verify', 'use', subject),
  prove: encodeCustomId('verify', 'prove'),
};
const SHARE_BUTTON_ID = encodeCustomId('verify', 'share');
const SHARE_CHOICES = ['all-servers', 'this-server'] as const;

/**
 * `/verify <identity>` for the member who asked: brought at once when this account proved it by
 * signature before, linked at once by record, else the signing link (also /whoami's sign button).
 */
export async function verify(identity: string, ctx: CommandContext): Promise<MessagePayload> {
  const access = gatingAccess(ctx);
  if (!access.ok) return access.answer;
  const username = invokerUsername(ctx);
  const { verification } = access.service;
  const result = await verification.verify(access.guildId, { id: ctx.userId, username }, identity);
  const offerShare = result.kind === 'linked' && !(await verification.carrier.shares(ctx.userId));
  return renderVerifyResult(
    result,
    identity,
    guildNames(ctx),
    ctx.render,
    offerShare ? SHARE_BUTTON_ID : undefined,
  );
}

/** The member's proofs by signature as "Use X here" buttons, privately (none: how to prove one). */
async function proofChoices(ctx: CommandContext): Promise<MessagePayload> {
  const access = gatingAccess(ctx);
  if (!access.ok) return access.answer;
  const proofs = await access.service.verification.carrier.proofs(ctx.userId);
  return renderProofChoices(proofs, PROOF_CHOICE_IDS, ctx.render);
}

async function setSharing(on: boolean, ctx: CommandContext): Promise<MessagePayload> {
  const access = gatingAccess(ctx);
  if (!access.ok) return access.answer;
  const servers = await access.service.verification.carrier.setSharing(ctx.userId, on);
  return renderSharing(on, servers, ctx.render);
}

/** A "Use X here" click: that proof, if it is still the member's, brought here (its record read again). */
async function useProof(subject: string, ctx: CommandContext): Promise<MessagePayload> {
  const access = gatingAccess(ctx);
  if (!access.ok) return access.answer;
  const proof = (await access.service.verification.carrier.proofs(ctx.userId)).find(
    (p) => p.subject === subject,
  );
  return proof ? verify(proof.identity, ctx) : renderProofGone(ctx.render);
}

export default {
  handedToGateway: true,
  data: {
    name: 'verify',
    integration_types: GUILD_INSTALL_ONLY,
    ...described('commands.verify.description'),
    contexts: GUILD_ONLY_CONTEXTS,
    options: [
      identityOption('commands.verify.options.identity', { required: false }),
      {
        type: ApplicationCommandOptionType.String,
        name: 'share',
        ...described('commands.verify.options.share'),
        required: false,
        choices: SHARE_CHOICES.map((choice) => ({
          ...named(`commands.verify.share.${choice}`),
          value: choice,
        })),
      },
    ],
  },
  cooldown: true,
  ephemeral: true,
  async answer(options, ctx) {
    const identity = typeof options.identity === 'string' ? options.identity.trim() : '';
    const share = options.share === 'all-servers' || options.share === 'this-server' ? options.share : null;
    if (!identity) return share ? setSharing(share === 'all-servers', ctx) : proofChoices(ctx);
    if (!share) return verify(identity, ctx);
    // Sharing first: the answer keeps its own buttons (a signing link), and offers no share button again.
    const shared = await setSharing(share === 'all-servers', ctx);
    const reply = await verify(identity, ctx);
    return { ...reply, embeds: [...(reply.embeds ?? []), ...(shared.embeds ?? [])] };
  },
  // The member's own proofs first (only they see their suggestions), then their lookups.
  suggest: {
    identity: (typed, _options, ctx) =>
      suggestIdentities(ctx.deps, { userId: ctx.userId, guildId: ctx.guildId }, typed, { provenFirst: true }),
  },
  components: {
    use([subject], _values, ctx) {
      return useProof(subject ?? '', ctx);
    },
  },
  // The verify panel's Verify button (verifyPanel.ts) and "Share with all my servers": answered privately.
  privateComponents: {
    panel: (_args, _values, ctx) => proofChoices(ctx),
    share: (_args, _values, ctx) => setSharing(true, ctx),
  },
  modalOpeners: {
    prove: (_args, ctx) => renderVerifyModal(VERIFY_MODAL_IDS, MAX_IDENTITY_LENGTH, ctx.render),
  },
  modals: {
    identity(_args, fields, ctx) {
      return verify((fields[VERIFY_MODAL_IDS.identity] ?? '').trim(), ctx);
    },
  },
} satisfies Command;
