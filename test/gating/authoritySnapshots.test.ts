/**
 * The gateway side's authority snapshots (what web replicas decide on): the real discord.js client on
 * the stand-in Discord, a SQLite store, and the events Discord sends when a server's roles change.
 */
import { GatewayDispatchEvents, PermissionFlagsBits } from 'discord-api-types/v10';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AuthoritySnapshots, WRITE_ATTEMPTS } from '../../src/gating/roles/authoritySnapshots.ts';
import { openSqliteStore } from '../../src/store/sqliteStore.ts';
import type { GatingStore } from '../../src/store/types.ts';
import { addGuild, addRole, type Fakes, silentLogger, startFakes, waitFor } from './serviceHarness.ts';

let fakes: Fakes;
let store: GatingStore;
let snapshots: AuthoritySnapshots | undefined;

beforeAll(async () => {
  fakes = await startFakes();
});
afterAll(async () => {
  await fakes.close();
});
afterEach(async () => {
  await snapshots?.stop();
  snapshots = undefined;
  await store?.close();
});

async function start(debounceMs = 20): Promise<AuthoritySnapshots> {
  store = await openSqliteStore(':memory:');
  snapshots = new AuthoritySnapshots({ discord: fakes.client, store, logger: silentLogger, debounceMs });
  snapshots.start();
  return snapshots;
}

/** Resolves once the stored snapshot of `guildId` satisfies `check`. */
async function stored(guildId: string, check: (roles: Map<string, bigint>, ownerId: string) => boolean) {
  let ok = false;
  const deadline = Date.now() + 5_000;
  while (!ok) {
    const snapshot = await store.getGuildAuthority(guildId);
    ok =
      snapshot !== undefined &&
      check(new Map(snapshot.roles.map((r) => [r.id, r.permissions])), snapshot.ownerId);
    if (!ok && Date.now() > deadline) throw new Error(`snapshot of ${guildId} never matched`);
    if (!ok) await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

describe('authority snapshots', () => {
  it('writes every server the client has once started, with its owner and roles as cached', async () => {
    const a = await addGuild(fakes);
    const b = await addGuild(fakes);
    const s = await start();
    await s.idle();
    for (const guild of [a, b]) {
      const snapshot = await store.getGuildAuthority(guild.id);
      expect(snapshot?.ownerId).toBe(guild.ownerId);
      expect(new Set(snapshot?.roles.map((r) => r.id))).toEqual(new Set(guild.roles.keys()));
      const everyone = snapshot?.roles.find((r) => r.id === guild.id);
      expect(everyone?.permissions).toBe(BigInt(guild.roles.get(guild.id)?.permissions ?? '-1'));
    }
  });

  it('follows a role made, changed and deleted, and forgets a server the bot leaves', async () => {
    const guild = await addGuild(fakes);
    await start();
    await stored(guild.id, (roles) => roles.has(guild.id));

    const mods = await addRole(fakes, guild, 'Mods', 3);
    await stored(guild.id, (roles) => roles.get(mods.id) === 0n);

    const changed = { ...mods, permissions: PermissionFlagsBits.ManageRoles.toString() };
    guild.roles.set(mods.id, changed);
    fakes.discord.dispatch(GatewayDispatchEvents.GuildRoleUpdate, { guild_id: guild.id, role: changed });
    await stored(guild.id, (roles) => roles.get(mods.id) === PermissionFlagsBits.ManageRoles);

    guild.roles.delete(mods.id);
    fakes.discord.dispatch(GatewayDispatchEvents.GuildRoleDelete, { guild_id: guild.id, role_id: mods.id });
    await stored(guild.id, (roles) => roles.has(guild.id) && !roles.has(mods.id));

    fakes.discord.dispatch(GatewayDispatchEvents.GuildDelete, { id: guild.id });
    await waitFor(() => !fakes.client.guilds.cache.has(guild.id));
    await snapshots?.idle();
    expect(await store.getGuildAuthority(guild.id)).toBeUndefined();
  });

  it('keeps the name, icon, text channels and managed roles the dashboard shows, and follows a rename', async () => {
    const guild = await addGuild(fakes, { name: 'Before', channelNames: ['general', 'logs'] });
    await start();
    await stored(guild.id, (roles) => roles.has(guild.id));
    const snapshot = await store.getGuildAuthority(guild.id);
    expect(snapshot).toMatchObject({ name: 'Before', icon: null });
    expect(snapshot?.channels?.map((c) => c.name).sort()).toEqual(['general', 'logs']);
    expect(snapshot?.roles.find((r) => r.id === guild.botRoleId)?.managed).toBe(true);
    expect(snapshot?.roles.find((r) => r.id === guild.id)?.managed).toBe(false);
    fakes.discord.renameGuild(guild.id, 'After');
    let renamed = false;
    const deadline = Date.now() + 5_000;
    while (!renamed && Date.now() < deadline) {
      renamed = (await store.getGuildAuthority(guild.id))?.name === 'After';
      if (!renamed) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    expect(renamed).toBe(true);
  });

  it('forgets at start the servers the bot left while nobody watched, and keeps the others', async () => {
    const kept = await addGuild(fakes);
    store = await openSqliteStore(':memory:');
    await store.saveGuildAuthority({ guildId: '999999999999999999', ownerId: 'o', roles: [] });
    snapshots = new AuthoritySnapshots({
      discord: fakes.client,
      store,
      logger: silentLogger,
      debounceMs: 20,
    });
    snapshots.start();
    const deadline = Date.now() + 5_000;
    while ((await store.listGuildAuthorityIds()).includes('999999999999999999') && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 10));
    await snapshots.idle();
    const ids = await store.listGuildAuthorityIds();
    expect(ids).not.toContain('999999999999999999');
    expect(ids).toContain(kept.id);
  });

  it('gathers a burst of role events into one write per server', async () => {
    const guild = await addGuild(fakes);
    const s = await start(1_000);
    await s.idle();
    const writes: string[] = [];
    const save = store.saveGuildAuthority.bind(store);
    store.saveGuildAuthority = async (snapshot) => {
      writes.push(snapshot.guildId);
      await save(snapshot);
    };
    const roles: { id: string }[] = [];
    for (let i = 0; i < 5; i += 1) roles.push(await addRole(fakes, guild, `r${i}`, i + 1));
    await stored(guild.id, (stored) => roles.every((r) => stored.has(r.id)));
    expect(writes.length).toBeGreaterThanOrEqual(1);
    expect(writes.length).toBeLessThan(roles.length);
  });

  it('a write the store refused is tried again after a doubling wait, and only so many times', async () => {
    const [flaky, down] = [await addGuild(fakes), await addGuild(fakes)];
    store = await openSqliteStore(':memory:');
    const save = store.saveGuildAuthority.bind(store);
    const tries = new Map<string, number[]>();
    store.saveGuildAuthority = async (snapshot) => {
      const at = [...(tries.get(snapshot.guildId) ?? []), Date.now()];
      tries.set(snapshot.guildId, at);
      // PostgreSQL restarting: the first two writes of one server fail, every write of the other.
      if (snapshot.guildId === down.id || (snapshot.guildId === flaky.id && at.length <= 2))
        throw new Error('connection terminated');
      await save(snapshot);
    };
    snapshots = new AuthoritySnapshots({ discord: fakes.client, store, logger: silentLogger, retryMs: 40 });
    snapshots.start();
    await stored(flaky.id, (roles) => roles.has(flaky.id));
    const flakyTries = tries.get(flaky.id) ?? [];
    expect(flakyTries).toHaveLength(3);
    expect((flakyTries[1] ?? 0) - (flakyTries[0] ?? 0)).toBeGreaterThanOrEqual(35);
    expect((flakyTries[2] ?? 0) - (flakyTries[1] ?? 0)).toBeGreaterThanOrEqual(75);
    // 40 + 80 + 160 + 320 ms of waits, then it waits for the server's next event.
    await new Promise((resolve) => setTimeout(resolve, 1_200));
    expect(tries.get(down.id)).toHaveLength(WRITE_ATTEMPTS);
    expect(await store.getGuildAuthority(down.id)).toBeUndefined();
    expect(tries.get(flaky.id)).toHaveLength(3);
  });

  it('stops writing once stopped', async () => {
    const guild = await addGuild(fakes);
    const s = await start();
    await stored(guild.id, (roles) => roles.has(guild.id));
    await s.stop();
    const late = await addRole(fakes, guild, 'late', 2);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect((await store.getGuildAuthority(guild.id))?.roles.some((r) => r.id === late.id)).toBe(false);
  });
});
