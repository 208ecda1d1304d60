/**
 * INTERACTIONS=http with gating, split as a deployment runs it: two web replicas (PROCESS_ROLE=web)
 * behind one address answer every interaction Discord POSTs; the one gateway worker (PROCESS_ROLE=gateway)
 * runs gating. Gating commands, clicks and modals reach the worker through PostgreSQL, and the role
 * changes they queue are applied by the worker, whichever replica took them.
 */
import {
  ApplicationCommandOptionType,
  InteractionResponseType,
  PermissionFlagsBits,
} from 'discord-api-types/v10';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PROOF_CHOICE_IDS } from '../../commands/verify.ts';
import type { createDatabase } from '../../fakes/localPostgres.ts';
import { deleteKeys, REDIS_URL } from '../../fakes/localRedis.ts';
import type { startRoundRobin } from '../../fakes/roundRobin.ts';
import { closeRedisClient, createRedisClient, untilRedisReady } from '../../src/cache/redisStore.ts';
import { VERIFY_MODAL_IDS, VERIFY_PANEL_IDS } from '../../src/discord/verifyPanel.ts';
import {
  addGuildRole,
  addIdentity,
  addMember,
  closeGating,
  embedOf,
  type GatingHarness,
  gatingCommandRun,
  gatingGroupRun,
  hasRole,
  option,
  seen,
  setup,
  startGating,
  verifyByRecord,
  waitFor,
} from './gatingHarness.ts';
import { ALICE, BOB, callbackTypes, isEphemeral, visibleMessage } from './harness.ts';
import { handedOverIn, type Replica, startSplit } from './replicaHarness.ts';
import { addRule } from './ruleShortcuts.ts';

const PREFIX = `e2e-http-gating-${process.pid}-${Date.now().toString(36)}:`;

describe('web replicas hand gating to the gateway worker (PostgreSQL)', () => {
  let db: Awaited<ReturnType<typeof createDatabase>>;
  let g: GatingHarness;
  const replicas: Replica[] = [];
  let lb: Awaited<ReturnType<typeof startRoundRobin>>;
  let sql: pg.Client;

  beforeAll(async () => {
    ({ db, g, lb } = await startSplit(
      'http_gating',
      { REDIS_URL, REDIS_PREFIX: PREFIX },
      replicas,
      {},
      {
        channelNames: ['general', 'ticket-7'],
      },
    ));
    sql = new pg.Client({ connectionString: db.url });
    await sql.connect();
  }, 30_000);
  afterAll(async () => {
    await lb?.close();
    for (const r of replicas) await r.close();
    await closeGating();
    await sql?.end();
    await db?.drop();
    const redis = createRedisClient(REDIS_URL);
    await untilRedisReady(redis);
    await deleteKeys(redis, `${PREFIX}*`);
    await closeRedisClient(redis);
  });
  const handedOver = () => handedOverIn(replicas);
  const until = untilTrue;
  /** Rule-removal suggestions for `userId`, typed in `channelId` (answered by whichever replica). */
  async function ruleSuggestions(userId: string, channelId: string): Promise<{ value: string }[]> {
    const typed = await g.h.discord.typeInOption({
      name: 'gating',
      focused: 'rule',
      value: '',
      userId,
      channelId,
      options: [
        {
          type: ApplicationCommandOptionType.SubcommandGroup,
          name: 'rule',
          options: [{ type: ApplicationCommandOptionType.Subcommand, name: 'remove', options: [] }],
        } as never,
      ],
    });
    expect(callbackTypes(typed)).toEqual([InteractionResponseType.ApplicationCommandAutocompleteResult]);
    return typed.callbacks[0]?.data.choices ?? [];
  }

  it('/gating setup through a replica: deferred privately in the body, answered by the worker', async () => {
    const message = await setup(g);
    expect(seen(message)).toContain('Verified Human');
    expect(isEphemeral(message)).toBe(true);
    const handedOver = replicas
      .flatMap((r) => r.logs)
      .filter((l) => l.msg === 'interaction handed to the gateway worker');
    expect(handedOver).toHaveLength(1);
    // The worker took no interaction over the gateway: Discord sends them to the endpoint.
    expect(g.h.discord.httpDeliveries.every((d) => d.status === 200)).toBe(true);
  });

  it('/verify by record from either replica: the worker links, and queues and applies the role', async () => {
    addIdentity(g, 'alice.eth', { discordHandle: 'alice', human: true });
    addIdentity(g, 'bob.eth', { discordHandle: 'bob', human: true });
    const served = lb.served.length;
    const alice = await g.h.run('verify', { identity: 'alice.eth' }, { userId: ALICE, timeoutMs: 15_000 });
    const bob = await g.h.run('verify', { identity: 'bob.eth' }, { userId: BOB, timeoutMs: 15_000 });
    expect(callbackTypes(alice)).toEqual([5]);
    expect(new Set(lb.served.slice(served))).toEqual(new Set(replicas.map((r) => r.replica.url)));
    await g.gating.service.idle(g.guildId);
    await waitFor(() => hasRole(g, ALICE, g.humanRoleId) && hasRole(g, BOB, g.humanRoleId), 'the roles');
    expect(seen(visibleMessage(alice))).toContain('alice.eth');
    expect(seen(visibleMessage(bob))).toContain('bob.eth');
    // Either replica suggests what she proved, read from the shared store.
    for (let i = 0; i < 2; i++) {
      const typed = await g.h.typeIn('whois', 'identity', 'ali', { userId: ALICE });
      expect(typed.callbacks[0]?.data.choices.map((c: { value: string }) => c.value)).toContain('alice.eth');
    }
  });

  it("the verify panel: Verify goes to the worker (the member's proofs); Prove, on that answer, is a modal the replica opens itself; its submit goes to the worker", async () => {
    const posted = await gatingCommandRun(g, 'panel', [
      option(ApplicationCommandOptionType.Channel, 'channel', g.logChannelId),
    ]);
    expect(seen(visibleMessage(posted))).toContain('The verify panel is now in');
    const panel = [...g.h.discord.state.messages.values()].find((m) =>
      JSON.stringify(m.components ?? []).includes(VERIFY_PANEL_IDS.verify),
    );
    if (!panel) throw new Error('no panel');
    addIdentity(g, 'carol.eth', { discordHandle: 'alice', human: true });
    const listed = await g.h.click(panel, VERIFY_PANEL_IDS.verify, undefined, { userId: ALICE });
    expect(callbackTypes(listed)).toEqual([5]);
    const choices = visibleMessage(listed);
    expect(isEphemeral(choices)).toBe(true);
    const opened = await g.h.click(choices, PROOF_CHOICE_IDS.prove, undefined, { userId: ALICE });
    expect(callbackTypes(opened)).toEqual([InteractionResponseType.Modal]);
    const submitted = await g.h.discord.submitModal({
      opened,
      fields: { [VERIFY_MODAL_IDS.identity]: 'carol.eth' },
      timeoutMs: 15_000,
    });
    expect(callbackTypes(submitted)).toEqual([5]);
    expect(isEphemeral(visibleMessage(submitted))).toBe(true);
    expect(seen(visibleMessage(submitted))).toContain('carol.eth');
  });

  it('a captured /gating exempt add replayed to the other replica after the exemption was removed gets 401: it stays removed, one hand-off row, no token at rest', async () => {
    const exemptions = () => g.gating.store.listExemptions(g.guildId);
    const added = await gatingGroupRun(g, 'exempt', 'add', [
      option(ApplicationCommandOptionType.User, 'member', BOB),
    ]);
    const servedBy = lb.served.at(-1);
    await expect.poll(async () => (await exemptions()).map((e) => e.targetId)).toEqual([BOB]);
    expect(seen(visibleMessage(added))).not.toBe('');
    const captured = added.delivery?.sent;
    if (!captured) throw new Error('the stand-in recorded no bytes');
    await gatingGroupRun(g, 'exempt', 'remove', [option(ApplicationCommandOptionType.User, 'member', BOB)]);
    await expect.poll(async () => (await exemptions()).length).toBe(0);

    const other = replicas.find((r) => r.replica.url !== servedBy);
    if (!other) throw new Error('no other replica');
    const replayed = await fetch(other.endpoint, { method: 'POST', ...captured });
    expect(replayed.status).toBe(401);
    expect(other.logs.filter((l) => l.msg === 'interaction delivery refused').at(-1)).toMatchObject({
      refusal: 'replayed',
    });
    // Given the worker time to act on anything queued: nothing was.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await exemptions()).toEqual([]);
    const { rows } = await sql.query('SELECT * FROM interaction_handoffs WHERE interaction_id = $1', [
      added.interactionId,
    ]);
    expect(rows).toHaveLength(1);
    // The token of any hand-off, answered or not, is nowhere in the table in clear.
    const token = JSON.parse(captured.body).token as string;
    const all = await sql.query('SELECT * FROM interaction_handoffs');
    expect(all.rows.length).toBeGreaterThan(1);
    expect(JSON.stringify(all.rows)).not.toContain(token);
    expect(rows[0]?.sealed_token).toBeNull();
  });

  it('a member without Manage Roles is refused by the worker, from a replica, and nothing is stored', async () => {
    const before = await g.gating.store.getGuildSettings(g.guildId);
    const result = await gatingCommandRun(g, 'disable', [], BOB);
    expect(isEphemeral(visibleMessage(result))).toBe(true);
    expect(await g.gating.store.getGuildSettings(g.guildId)).toEqual(before);
    await verifyByRecord(g, 'alice.eth');
    expect(hasRole(g, ALICE, g.humanRoleId)).toBe(true);
  });

  it('a ticket member with Manage Permissions is refused by the worker; a replica suggests rules from the stored roles', async () => {
    const ticket = [...g.h.guild.channels.keys()][1] ?? '';
    const tier = await addGuildRole(g, 'Tier', 4);
    expect((await addRule(g, tier, 'score', '20')).applied).toContain('score');
    const mods = await addGuildRole(g, 'Mods', 5, PermissionFlagsBits.ManageRoles);
    const moderator = await addMember(g, 'moderator', { roles: [mods] });
    const ticketer = await addMember(g, 'ticketer');
    g.h.discord.setChannelOverwrite(g.guildId, ticket, {
      id: ticketer,
      type: 'member',
      allow:
        PermissionFlagsBits.ManageRoles | PermissionFlagsBits.ViewChannel | PermissionFlagsBits.SendMessages,
    });
    const payload = g.h.discord.buildCommandInteraction({
      name: 'gating',
      userId: ticketer,
      channelId: ticket,
    });
    expect(BigInt(payload.member?.permissions ?? '0') & PermissionFlagsBits.ManageRoles).toBe(
      PermissionFlagsBits.ManageRoles,
    );

    // Handed to the worker, which decides from the server's roles: refused, nothing changed.
    const before = await g.gating.store.getGuildSettings(g.guildId);
    const handedBefore = handedOver().length;
    const refused = visibleMessage(await gatingCommandRun(g, 'disable', [], ticketer, ticket));
    expect(isEphemeral(refused)).toBe(true);
    expect(embedOf(refused).title).toBe('🔒 Manage Roles needed');
    expect(handedOver().length).toBe(handedBefore + 1);
    expect(await g.gating.store.getGuildSettings(g.guildId)).toEqual(before);

    // Suggestions cannot be handed over: each replica answers from the snapshot the worker keeps in the
    // store (written once ready and after role events), with the member's role ids from the interaction.
    await until(
      async () =>
        (await g.gating.store.getGuildAuthority(g.guildId))?.roles.some((r) => r.id === mods) === true,
      'the worker to store the Mods role',
    );
    const served = lb.served.length;
    for (let i = 0; i < 2; i++) {
      expect((await ruleSuggestions(moderator, ticket)).map((c) => c.value)).toEqual([`${tier}:score:20`]);
      expect(await ruleSuggestions(ticketer, ticket)).toEqual([]);
    }
    expect(new Set(lb.served.slice(served))).toEqual(new Set(replicas.map((r) => r.replica.url)));
    expect(handedOver().length).toBe(handedBefore + 1);

    // A role made a moderator role later reaches the replicas through the store too.
    const helpers = await addGuildRole(g, 'Helpers', 3, PermissionFlagsBits.ManageRoles);
    const helper = await addMember(g, 'helper', { roles: [helpers] });
    await until(
      async () =>
        (await g.gating.store.getGuildAuthority(g.guildId))?.roles.some((r) => r.id === helpers) === true,
      'the worker to store the Helpers role',
    );
    expect((await ruleSuggestions(helper, ticket)).map((c) => c.value)).toEqual([`${tier}:score:20`]);
  });
});

async function untilTrue(condition: () => Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('while Redis is down, the store still acts on a handed-over gating command once', () => {
  let db: Awaited<ReturnType<typeof createDatabase>>;
  let g: GatingHarness;
  const replicas: Replica[] = [];
  let lb: Awaited<ReturnType<typeof startRoundRobin>>;

  beforeAll(async () => {
    // A port nothing listens on: every Redis command fails at once, as in an outage.
    ({ db, g, lb } = await startSplit(
      'http_gating_no_redis',
      { REDIS_URL: 'redis://127.0.0.1:1' },
      replicas,
      { LOG_LEVEL: 'info' },
    ));
  }, 30_000);
  afterAll(async () => {
    await lb?.close();
    for (const r of replicas) await r.close();
    await closeGating();
    await db?.drop();
  });

  it('/gating exempt add replayed to the other replica: deferred there, but not queued again; the exemption stays removed', async () => {
    await setup(g);
    const exemptions = () => g.gating.store.listExemptions(g.guildId);
    const member = option(ApplicationCommandOptionType.User, 'member', BOB);
    const added = await gatingGroupRun(g, 'exempt', 'add', [member]);
    const servedBy = lb.served.at(-1);
    await expect.poll(async () => (await exemptions()).length).toBe(1);
    await gatingGroupRun(g, 'exempt', 'remove', [member]);
    await expect.poll(async () => (await exemptions()).length).toBe(0);
    const captured = added.delivery?.sent;
    const other = replicas.find((r) => r.replica.url !== servedBy);
    if (!captured || !other) throw new Error('no captured delivery or no other replica');

    // Without Redis the other replica cannot know it was answered, and defers it: the store refuses the hand-off.
    const replayed = await fetch(other.endpoint, { method: 'POST', ...captured });
    expect(replayed.status).toBe(200);
    await waitFor(
      () =>
        other.logs.some(
          (l) => l.msg === 'interaction already handed to the gateway worker: replay not queued',
        ),
      'the replay logged',
    );
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await exemptions()).toEqual([]);
    expect(other.logs.some((l) => String(l.msg).startsWith('Redis unreachable'))).toBe(true);
    // The worker ran it once.
    const answered = g.h.logs.filter(
      (l) => l.msg === 'handed-over interaction answered' && l.interactionId === added.interactionId,
    );
    expect(answered).toHaveLength(1);
  });
});

describe('one process with gating over HTTP (PROCESS_ROLE=all)', () => {
  let g: GatingHarness;
  beforeAll(async () => {
    g = await startGating({ env: { INTERACTIONS: 'http' } });
    const saved = await g.h.discord.saveInteractionsEndpoint(`${g.gating.verifyUrl}/interactions`);
    expect(saved.saved).toBe(true);
  });
  afterAll(closeGating);

  it('serves /interactions beside the signing page and runs gating itself, with no hand-off', async () => {
    await setup(g);
    addIdentity(g, 'alice.eth', { discordHandle: 'alice', human: true });
    const reply = await verifyByRecord(g, 'alice.eth');
    expect(seen(reply)).toContain('alice.eth');
    expect(hasRole(g, ALICE, g.humanRoleId)).toBe(true);
    expect(g.h.logs.some((l) => l.msg === 'interaction handed to the gateway worker')).toBe(false);
    expect(g.h.discord.httpDeliveries.filter((d) => d.kind === 'command').length).toBeGreaterThanOrEqual(2);
    const page = await fetch(`${g.gating.verifyUrl}/healthz`);
    expect(await page.text()).toBe('ok');
  });
});
