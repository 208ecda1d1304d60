/** The guild authority snapshots in the store contract (migration 15), on SQLite and on PostgreSQL. */
import { describe, expect, it } from 'vitest';
import type { GatingStore, StoredGuildRole } from '../../src/store/types.ts';
import { freshDatabaseEachTest, STORE_BACKENDS, type StoreHarness } from './harness.ts';

const G = 'guild-1';
const HOSTILE = `'); DROP TABLE guild_authority; -- "quoted" \\ ✓ 𝔘 %s $1 ?1 \u0000`;
/** Administrator | Manage Roles, and a bit past 2^53: JSON numbers would lose it. */
const WIDE = (1n << 3n) | (1n << 28n) | (1n << 53n) | (1n << 60n);

const roles = (...list: [string, string, number, bigint][]): StoredGuildRole[] =>
  list.map(([id, name, position, permissions]) => ({ id, name, position, permissions }));

describe.each(STORE_BACKENDS)('guild authority snapshots in the store (%s)', (_name, makeHarness) => {
  let h: StoreHarness;
  let store: GatingStore;
  const time = { t: 1_700_000_000_000 };

  freshDatabaseEachTest(makeHarness, async (harness) => {
    h = harness;
    time.t = 1_700_000_000_000;
    store = await h.open({ now: () => time.t });
  });

  it('has none for a server never written', async () => {
    expect(await store.getGuildAuthority(G)).toBeUndefined();
    expect(await store.deleteGuildAuthority(G)).toBe(false);
  });

  it('reads back the owner and every role exactly, wide bitfields and hostile names included', async () => {
    const written = roles([G, '@everyone', 0, 1024n], ['r-mod', HOSTILE, 5, WIDE], ['r-0', '', 1, 0n]);
    await store.saveGuildAuthority({ guildId: G, ownerId: 'owner-1', roles: written });
    await store.saveGuildAuthority({ guildId: 'other', ownerId: 'owner-2', roles: [] });
    const read = await store.getGuildAuthority(G);
    expect(read).toEqual({
      guildId: G,
      ownerId: 'owner-1',
      roles: written.map((r) =>
        r.name === HOSTILE ? { ...r, name: HOSTILE.replace('\u0000', '\uFFFD') } : r,
      ),
      // Written without them (as before migration 17): no name, icon or channels.
      name: null,
      icon: null,
      channels: [],
      updatedAt: time.t,
    });
    expect(read?.roles[1]?.permissions).toBe(WIDE);
    expect((await store.getGuildAuthority('other'))?.roles).toEqual([]);
  });

  it('a later write replaces the whole snapshot (a role deleted, the owner changed)', async () => {
    await store.saveGuildAuthority({
      guildId: G,
      ownerId: 'owner-1',
      roles: roles([G, '@everyone', 0, 0n], ['r-mod', 'Mods', 5, 1n << 28n]),
    });
    time.t += 1_000;
    await store.saveGuildAuthority({ guildId: G, ownerId: 'owner-2', roles: roles([G, '@everyone', 0, 0n]) });
    expect(await store.getGuildAuthority(G)).toEqual({
      guildId: G,
      ownerId: 'owner-2',
      roles: roles([G, '@everyone', 0, 0n]),
      name: null,
      icon: null,
      channels: [],
      updatedAt: time.t,
    });
  });

  it('deletes one server’s snapshot, leaving the others', async () => {
    await store.saveGuildAuthority({ guildId: G, ownerId: 'o', roles: [] });
    await store.saveGuildAuthority({ guildId: 'other', ownerId: 'o', roles: [] });
    expect(await store.deleteGuildAuthority(G)).toBe(true);
    expect(await store.getGuildAuthority(G)).toBeUndefined();
    expect(await store.getGuildAuthority('other')).toBeDefined();
  });

  it('is shared: a second store on the same database reads what the first wrote', async () => {
    const other = await h.open({ now: () => time.t });
    await store.saveGuildAuthority({ guildId: G, ownerId: 'o', roles: roles(['r', 'R', 1, 8n]) });
    expect((await other.getGuildAuthority(G))?.roles).toEqual(roles(['r', 'R', 1, 8n]));
  });
});
