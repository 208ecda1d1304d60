/** The role-rule part of the store contract (migration 13), on SQLite and on PostgreSQL. */
import { describe, expect, it } from 'vitest';
import type { AddRuleConditionInput, GatingStore, StoreOptions } from '../../src/store/types.ts';
import { freshDatabaseEachTest, STORE_BACKENDS, type StoreHarness } from './harness.ts';

const G = 'guild-1';
const HOSTILE = `'); DROP TABLE gating_rules; -- "quoted" \\ ✓ 𝔘 %s $1 ?1`;

const condition = (over: Partial<AddRuleConditionInput> = {}): AddRuleConditionInput => ({
  guildId: G,
  roleId: 'role-20',
  condition: 'score:20',
  match: null,
  addedBy: 'mod-1',
  maxPerGuild: 25,
  ...over,
});

describe.each(STORE_BACKENDS)('role rules in the store (%s)', (_name, makeHarness) => {
  let h: StoreHarness;
  let store: GatingStore;
  const time = { t: 1_700_000_000_000 };
  const open = (opts: StoreOptions = {}) => h.open({ now: () => time.t, ...opts });

  freshDatabaseEachTest(makeHarness, async (harness) => {
    h = harness;
    time.t = 1_700_000_000_000;
    store = await open();
  });

  it('adds, lists oldest first, removes, and audits each change', async () => {
    expect(await store.addRuleCondition(condition())).toEqual({ created: true, full: false });
    time.t += 10;
    await store.addRuleCondition(
      condition({ roleId: 'role-og', condition: 'platform:ens', addedBy: 'mod-2' }),
    );
    time.t += 10;
    await store.addRuleCondition(condition({ roleId: 'role-og', condition: HOSTILE, match: 'any' }));
    await store.addRuleCondition(condition({ guildId: 'other', condition: 'score:30' }));

    const list = await store.listRuleConditions(G);
    expect(list.map((c) => [c.roleId, c.condition, c.match, c.addedBy])).toEqual([
      ['role-20', 'score:20', 'all', 'mod-1'],
      ['role-og', 'platform:ens', 'any', 'mod-2'],
      ['role-og', HOSTILE, 'any', 'mod-1'],
    ]);
    expect(list[0]?.addedAt).toBe(1_700_000_000_000);

    // The same condition again: nothing new; a new match mode still applies to the whole rule.
    expect(await store.addRuleCondition(condition({ addedBy: 'mod-3' }))).toEqual({
      created: false,
      full: false,
    });
    await store.addRuleCondition(condition({ roleId: 'role-og', condition: 'platform:ens', match: 'all' }));
    expect(
      (await store.listRuleConditions(G)).filter((c) => c.roleId === 'role-og').map((c) => c.match),
    ).toEqual(['all', 'all']);

    const key = { guildId: G, roleId: 'role-og', condition: HOSTILE };
    expect(await store.removeRuleCondition(key, 'mod-4')).toBe(true);
    expect(await store.removeRuleCondition(key, 'mod-4')).toBe(false);
    // The same key of another role is another condition.
    expect(
      await store.removeRuleCondition({ ...key, roleId: 'role-20', condition: 'platform:ens' }, 'mod-4'),
    ).toBe(false);
    expect((await store.listRuleConditions(G)).map((c) => c.condition)).toEqual(['score:20', 'platform:ens']);
    expect(await store.listRuleConditions('other')).toHaveLength(1);

    const audit = await store.listAuditEvents({ guildId: G });
    expect(audit.map((e) => [e.kind, e.userId, e.roleId])).toEqual([
      ['rule_removed', 'mod-4', 'role-og'],
      ['rule_added', 'mod-1', 'role-og'],
      ['rule_added', 'mod-1', 'role-og'],
      ['rule_added', 'mod-2', 'role-og'],
      ['rule_added', 'mod-1', 'role-20'],
    ]);
  });

  it('stops at the guild maximum, and adds nothing past it', async () => {
    for (const n of [1, 2, 3])
      await store.addRuleCondition(condition({ condition: `score:${n}`, maxPerGuild: 3 }));
    expect(await store.addRuleCondition(condition({ condition: 'score:4', maxPerGuild: 3 }))).toEqual({
      created: false,
      full: true,
    });
    // One already there is not "more".
    expect(await store.addRuleCondition(condition({ condition: 'score:2', maxPerGuild: 3 }))).toEqual({
      created: false,
      full: false,
    });
    expect(await store.listRuleConditions(G)).toHaveLength(3);
  });

  it('keeps one row when two stores add the same condition at once', async () => {
    const other = await open();
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        (i % 2 ? store : other).addRuleCondition(condition({ addedBy: `mod-${i}` })),
      ),
    );
    expect(results.filter((r) => r.created)).toHaveLength(1);
    expect(await store.listRuleConditions(G)).toHaveLength(1);
    const audit = await store.listAuditEvents({ guildId: G });
    expect(audit.filter((e) => e.kind === 'rule_added')).toHaveLength(1);
  });
});
