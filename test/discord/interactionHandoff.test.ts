/** The worker's hand-off inbox against a store of its own: what it answers, drops and leaves to others. */
import type { APIInteraction } from 'discord-api-types/v10';
import { describe, expect, it } from 'vitest';
import { HandoffInbox, INTERACTION_TOKEN_LIFE_MS } from '../../src/discord/interactionHandoff.ts';
import type { Responder } from '../../src/discord/responder.ts';
import type { WebhookRest } from '../../src/discord/webhookRest.ts';
import { createLogger } from '../../src/ops/log.ts';
import type { ClaimedHandoff, HandoffStore } from '../../src/store/handoffTypes.ts';

type Row = { id: number; guildId: string; createdAt: number; attempts: number; claimed: boolean };

function memoryStore(rows: Row[]): HandoffStore & { rows: Row[] } {
  return {
    rows,
    enqueueHandoff: async () => 0,
    openHandoffs: async () => rows.filter((r) => !r.claimed).map(({ id, guildId }) => ({ id, guildId })),
    async claimHandoff(id): Promise<ClaimedHandoff | null> {
      const row = rows.find((r) => r.id === id && !r.claimed);
      if (!row) return null;
      row.claimed = true;
      row.attempts += 1;
      const interaction = { id: String(id), guild_id: row.guildId, token: 't', application_id: 'a' };
      return { ...row, interaction, claimToken: `claim-${id}` };
    },
    async finishHandoff(id) {
      const index = rows.findIndex((r) => r.id === id);
      rows.splice(index, 1);
      return index >= 0;
    },
  };
}

const logger = createLogger({ level: 'silent', secrets: [] });
const NOW = 1_700_000_000_000;

describe('HandoffInbox', () => {
  it('answers its own guilds’ hand-offs as already deferred, drops expired or failing ones, leaves others', async () => {
    const store = memoryStore([
      { id: 1, guildId: 'mine', createdAt: NOW - 1_000, attempts: 0, claimed: false },
      { id: 2, guildId: 'mine', createdAt: NOW - INTERACTION_TOKEN_LIFE_MS, attempts: 0, claimed: false },
      { id: 3, guildId: 'mine', createdAt: NOW, attempts: 3, claimed: false },
      { id: 4, guildId: 'theirs', createdAt: NOW, attempts: 0, claimed: false },
    ]);
    const ran: { id: string; answered: boolean }[] = [];
    const inbox = new HandoffInbox({
      store,
      logger,
      rest: {} as WebhookRest,
      now: () => NOW,
      ownsGuild: (guildId) => guildId === 'mine',
      run: async (interaction: APIInteraction, responder: Responder) => {
        ran.push({ id: interaction.id, answered: responder.answered });
      },
    });
    inbox.nudge();
    await inbox.idle();
    expect(ran).toEqual([{ id: '1', answered: true }]);
    expect(store.rows.map((r) => r.id)).toEqual([4]);
    await inbox.stop();
  });
});
