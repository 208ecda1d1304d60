/**
 * The verify panel end to end: `/gating panel` posts one message with Verify and Check my status in a
 * channel (and edits it when run again); a member's Verify opens a modal whose submit continues as
 * /verify; Check my status answers /whoami privately; the buttons still work after the bot restarts.
 */
import {
  ApplicationCommandOptionType,
  InteractionResponseType,
  PermissionFlagsBits,
} from 'discord-api-types/v10';
import { afterEach, onTestFinished as afterThis, describe, expect, it } from 'vitest';
import { commandsFor } from '../../commands/index.ts';
import { PROOF_CHOICE_IDS } from '../../commands/verify.ts';
import type { FakeMessage } from '../../fakes/discord/server.ts';
import { startBot } from '../../src/app/bot.ts';
import { VERIFY_MODAL_IDS, VERIFY_PANEL_IDS } from '../../src/discord/verifyPanel.ts';
import { createLogger } from '../../src/ops/log.ts';
import {
  addIdentity,
  closeGating,
  embedOf,
  type GatingHarness,
  gatingCommandRun,
  hasRole,
  option,
  seen,
  setup,
  startGating,
} from './gatingHarness.ts';
import { ALICE, BOB, isEphemeral, visibleMessage } from './harness.ts';

afterEach(closeGating);

const postPanel = (g: GatingHarness, userId = g.ownerId) =>
  gatingCommandRun(
    g,
    'panel',
    [option(ApplicationCommandOptionType.Channel, 'channel', g.logChannelId)],
    userId,
  );

function panelsIn(g: GatingHarness, channelId: string): FakeMessage[] {
  return [...g.h.discord.state.messages.values()].filter(
    (m) =>
      m.channel_id === channelId &&
      m.author.id === g.h.discord.botUserId &&
      JSON.stringify(m.components ?? []).includes(VERIFY_PANEL_IDS.verify),
  );
}

function onlyPanel(g: GatingHarness): FakeMessage {
  const panels = panelsIn(g, g.logChannelId);
  expect(panels).toHaveLength(1);
  return panels[0] as FakeMessage;
}

/**
 * Verify on the panel: the member's proofs by signature, privately, with "Prove a new identity" (issue
 * #36); that button opens the modal.
 */
async function openProveModal(g: GatingHarness, userId = ALICE) {
  const choices = visibleMessage(
    await g.h.click(onlyPanel(g), VERIFY_PANEL_IDS.verify, undefined, { userId }),
  );
  expect(isEphemeral(choices)).toBe(true);
  return g.h.click(choices, PROOF_CHOICE_IDS.prove, undefined, { userId });
}

/** Verify on the panel, "Prove a new identity", then the modal submitted with `identity`: the private answer. */
async function verifyThroughPanel(g: GatingHarness, identity: string, userId = ALICE): Promise<FakeMessage> {
  const opened = await openProveModal(g, userId);
  const modal = opened.callbacks.find((c) => c.type === InteractionResponseType.Modal);
  expect(modal?.data.custom_id).toBe(VERIFY_MODAL_IDS.modal);
  const submitted = await g.h.discord.submitModal({
    opened,
    fields: { [VERIFY_MODAL_IDS.identity]: identity },
    timeoutMs: 15_000,
  });
  await g.gating.service.idle(g.guildId);
  return visibleMessage(submitted);
}

describe('verify panel', () => {
  it('an admin posts it; posting again edits the same message; a non-admin cannot post one', async () => {
    const g = await startGating();
    await setup(g);

    const first = visibleMessage(await postPanel(g));
    expect(isEphemeral(first)).toBe(true);
    expect(seen(first)).toContain('The verify panel is now in');
    const panel = onlyPanel(g);
    expect(embedOf(panel).title).toBe('Verify your identity');
    expect(seen(panel)).toContain('Check my status');
    expect(await g.gating.store.getVerifyPanel(g.guildId, g.logChannelId)).toBe(panel.id);

    const again = visibleMessage(await postPanel(g));
    expect(seen(again)).toContain('updated in place');
    expect(onlyPanel(g).id).toBe(panel.id);
    expect(
      g.h.discord.requests.filter((r) => r.method === 'PATCH' && r.path.endsWith(`/messages/${panel.id}`)),
    ).toHaveLength(1);

    const refused = visibleMessage(await postPanel(g, BOB));
    expect(isEphemeral(refused)).toBe(true);
    expect(embedOf(refused).title).toBe('🔒 Manage Roles needed');
    expect(onlyPanel(g).id).toBe(panel.id);
  });

  it('without Embed Links in the channel: a private error naming it, nothing posted', async () => {
    const g = await startGating({
      guild: {
        everyonePermissions: PermissionFlagsBits.ViewChannel | PermissionFlagsBits.SendMessages,
        botPermissions:
          PermissionFlagsBits.ManageRoles |
          PermissionFlagsBits.ViewChannel |
          PermissionFlagsBits.SendMessages,
      },
    });
    await setup(g);
    const refused = visibleMessage(await postPanel(g));
    expect(isEphemeral(refused)).toBe(true);
    expect(embedOf(refused).title).toBe('❌ Panel not posted');
    expect(seen(refused)).toContain('I am missing **Embed Links** there');
    expect(panelsIn(g, g.logChannelId)).toEqual([]);
    expect(await g.gating.store.getVerifyPanel(g.guildId, g.logChannelId)).toBeUndefined();
  });

  it('a panel deleted by hand is posted anew', async () => {
    const g = await startGating();
    await setup(g);
    await postPanel(g);
    const old = onlyPanel(g);
    g.h.discord.state.messages.delete(old.id);
    expect(seen(visibleMessage(await postPanel(g)))).toContain('The verify panel is now in');
    const fresh = onlyPanel(g);
    expect(fresh.id).not.toBe(old.id);
    expect(await g.gating.store.getVerifyPanel(g.guildId, g.logChannelId)).toBe(fresh.id);
  });

  it('Verify, with nothing proven yet, says how to prove one; its button opens a modal; a submitted identity whose record names the member links them and roles follow', async () => {
    const g = await startGating();
    await setup(g);
    await postPanel(g);
    addIdentity(g, 'alice.eth', { discordHandle: 'alice' });
    const choices = visibleMessage(await g.h.click(onlyPanel(g), VERIFY_PANEL_IDS.verify));
    expect(embedOf(choices).title).toBe('No proof by signature yet');
    expect(onlyPanel(g).id).not.toBe(choices.id);
    const opened = await openProveModal(g);
    const modal = opened.callbacks.find((c) => c.type === InteractionResponseType.Modal)?.data;
    const label = modal.components[0];
    expect(label.label.length).toBeLessThanOrEqual(45);
    expect(label.component.max_length).toBe(256);

    const answer = await verifyThroughPanel(g, 'alice.eth');
    expect(isEphemeral(answer)).toBe(true);
    expect(embedOf(answer).title).toBe('Verified');
    expect(hasRole(g, ALICE, g.humanRoleId)).toBe(true);
    const link = await g.gating.store.getLink({ guildId: g.guildId, userId: ALICE, identity: 'alice.eth' });
    expect(link?.proofMethod).toBe('record');
  });

  it('an invalid identity gets a friendly private error and changes nothing', async () => {
    const g = await startGating();
    await setup(g);
    await postPanel(g);
    const before = g.h.discord.requests.filter((r) => r.path.includes('/roles/')).length;
    const answer = await verifyThroughPanel(g, 'not an identity!!', BOB);
    expect(isEphemeral(answer)).toBe(true);
    expect(embedOf(answer).title).toBe('❌ Not verified');
    expect(await g.gating.store.getUserLinks(g.guildId, BOB)).toEqual([]);
    expect(g.h.discord.requests.filter((r) => r.path.includes('/roles/'))).toHaveLength(before);
  });

  it('Check my status shows the member their /whoami privately; the panel stays as it was', async () => {
    const g = await startGating();
    await setup(g);
    await postPanel(g);
    addIdentity(g, 'alice.eth', { discordHandle: 'alice' });
    await verifyThroughPanel(g, 'alice.eth');
    const panel = onlyPanel(g);
    const status = visibleMessage(await g.h.click(panel, VERIFY_PANEL_IDS.status));
    expect(isEphemeral(status)).toBe(true);
    expect(status.id).not.toBe(panel.id);
    expect(seen(status)).toContain('alice.eth · ENS');
    expect(onlyPanel(g)).toEqual(panel);
  });

  it('the buttons still work after the bot restarts on the same store', async () => {
    const g = await startGating();
    await setup(g);
    await postPanel(g);
    await g.h.bot.stop(2_000);
    const logger = createLogger({ level: 'silent', secrets: [] });
    const bot = await startBot({
      config: g.h.config,
      logger,
      web3bio: g.h.web3bio,
      commands: commandsFor(g.h.config),
    });
    afterThis(() => bot.stop(2_000));
    const restarted = bot.gating;
    if (!restarted) throw new Error('no gating after the restart');
    g.gating = restarted;

    addIdentity(g, 'alice.eth', { discordHandle: 'alice' });
    const answer = await verifyThroughPanel(g, 'alice.eth');
    expect(embedOf(answer).title).toBe('Verified');
    expect(hasRole(g, ALICE, g.humanRoleId)).toBe(true);
    const status = visibleMessage(await g.h.click(onlyPanel(g), VERIFY_PANEL_IDS.status));
    expect(seen(status)).toContain('alice.eth · ENS');
  });
});
