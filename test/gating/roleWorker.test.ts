import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { FakeGuild } from '../../fakes/discord/server.ts';
import { LogChannel, packLines } from '../../src/gating/roles/logChannel.ts';
import { MAX_CLAIMS } from '../../src/gating/roles/roleChangeApplier.ts';
import { RoleWorker } from '../../src/gating/roles/roleWorker.ts';
import type { GatingNotice } from '../../src/gating/types.ts';
import { gatingNoticeText } from '../../src/render/gatingNotices.ts';
import type { GatingStore, RoleOp } from '../../src/store/types.ts';
import {
  addGuild,
  addMember,
  addRole,
  channelMessages,
  type Fakes,
  memberRoles,
  openStore,
  roleEdits,
  silentLogger,
  startFakes,
  waitFor,
} from './serviceHarness.ts';

const changeLine = (change: { op: 'add' | 'remove'; roleId: string; userId: string; reason: string }) =>
  gatingNoticeText({ kind: 'role_changed', change });
/** A notice as a literal line (LogChannel tests post lines). */
const line = (text: string) => text as unknown as GatingNotice;
const asIs = (notice: GatingNotice) => notice as unknown as string;

describe('role-change lines and packLines', () => {
  it('writes one short line per change, escaping the reason and dropping the prefix', () => {
    expect(
      changeLine({ op: 'add', roleId: '1', userId: '2', reason: 'web3 gating: isHuman: Passport (a_b.eth)' }),
    ).toBe('Added <@&1> to <@2>: isHuman: Passport \\(a\\_b.eth\\)');
    expect(
      changeLine({ op: 'remove', roleId: '1', userId: '2', reason: 'web3 gating: @everyone <@3>\nnext' }),
    ).toBe('Removed <@&1> from <@2>: @\u200beveryone <\u200b@3\\> next');
    const long = changeLine({ op: 'add', roleId: '1', userId: '2', reason: 'x'.repeat(5_000) });
    expect(long.length).toBeLessThan(400);
  });

  it('packs lines into as few messages under 2000 characters as fit', () => {
    expect(packLines([])).toEqual([]);
    expect(packLines(['a', 'b'])).toEqual(['a\nb']);
    const line = 'y'.repeat(299);
    const messages = packLines(Array.from({ length: 20 }, () => line));
    expect(messages).toHaveLength(4);
    for (const m of messages) expect(m.length).toBeLessThanOrEqual(2_000);
    expect(messages.join('\n').split('\n')).toHaveLength(20);
  });
});

let fakes: Fakes;
let guild: FakeGuild;
let role: string;
let store: GatingStore;
let notices: string[];
let worker: RoleWorker;

beforeAll(async () => {
  fakes = await startFakes();
});
afterAll(async () => {
  await fakes.close();
});
beforeEach(async () => {
  guild = await addGuild(fakes);
  role = (await addRole(fakes, guild, 'Verified', 2)).id;
  store = await openStore();
  notices = [];
  worker = new RoleWorker({
    store,
    discord: fakes.client,
    logger: silentLogger,
    notices: { post: (_guildId, notice) => notices.push(gatingNoticeText(notice)) },
    pollMs: 20,
    backoffMs: 5,
    maxAttempts: 2,
  });
});
afterEach(async () => {
  await worker.stop(1_000);
  await store.close();
});

async function queue(userId: string, op: RoleOp = 'add') {
  await store.enqueueRoleChange({ guildId: guild.id, userId, roleId: role, op, reason: 'web3 gating: test' });
  worker.kick(guild.id);
  await worker.idle(guild.id);
  const [event] = await store.listAuditEvents({ guildId: guild.id, userId, limit: 1 });
  return event;
}

const rolePath = () => new RegExp(`^/guilds/${guild.id}/members/\\d+/roles/`);

describe('RoleWorker', () => {
  it('adds and removes roles with the stored reason as the audit-log reason, and posts a line', async () => {
    const userId = await addMember(fakes, guild, 'ann');
    expect((await queue(userId, 'add'))?.kind).toBe('role_added');
    expect(memberRoles(fakes, guild, userId)).toEqual([role]);
    expect((await queue(userId, 'remove'))?.kind).toBe('role_removed');
    expect(memberRoles(fakes, guild, userId)).toEqual([]);
    const reasons = fakes.discord.state.auditLog.filter((e) => e.userId === userId).map((e) => e.reason);
    expect(reasons).toEqual(['web3 gating: test', 'web3 gating: test']);
    expect(notices).toEqual([
      `Added <@&${role}> to <@${userId}>: test`,
      `Removed <@&${role}> from <@${userId}>: test`,
    ]);
  });

  it('completes without a request when the member already has (or lacks) the role', async () => {
    const userId = await addMember(fakes, guild, 'bea', [role]);
    const event = await queue(userId, 'add');
    expect(event).toMatchObject({ kind: 'role_added', details: { detail: 'already had the role' } });
    const other = await addMember(fakes, guild, 'cy');
    expect((await queue(other, 'remove'))?.details).toMatchObject({ detail: 'already without the role' });
    expect([...roleEdits(fakes, guild.id, userId, role), ...roleEdits(fakes, guild.id, other, role)]).toEqual(
      [],
    );
    expect(notices).toEqual([]);
  });

  it('records unknown members and unknown roles as failed, without retrying', async () => {
    const refusedWith = async (username: string, body: { message: string; code: number }) => {
      const userId = await addMember(fakes, guild, username);
      fakes.discord.addFault({ method: 'PUT', path: rolePath(), status: 404, body });
      const event = await queue(userId);
      expect(roleEdits(fakes, guild.id, userId, role)).toHaveLength(1);
      return event;
    };
    expect(await refusedWith('dee', { message: 'Unknown Member', code: 10007 })).toMatchObject({
      kind: 'role_failed',
      details: { detail: 'unknown member: they left the server' },
    });
    expect(await refusedWith('eli', { message: 'Unknown Role', code: 10011 })).toMatchObject({
      kind: 'role_failed',
      details: { detail: 'unknown role: it was deleted' },
    });
    expect(notices.some((n) => n.includes('no longer exists'))).toBe(true);
  });

  it('fails at once, with no request, for a member who left', async () => {
    const userId = await addMember(fakes, guild, 'fin');
    fakes.discord.removeMember(guild.id, userId);
    expect(await queue(userId)).toMatchObject({ kind: 'role_failed' });
    expect(roleEdits(fakes, guild.id, userId, role)).toEqual([]);
  });

  it('retries server errors a bounded number of times, then fails', async () => {
    const flaky = await addMember(fakes, guild, 'gil');
    // discord.js retries a 5xx itself (3 times); two failures are absorbed in one attempt.
    fakes.discord.addFault({ method: 'PUT', path: rolePath(), times: 2, status: 500 });
    expect((await queue(flaky))?.kind).toBe('role_added');

    const broken = await addMember(fakes, guild, 'hub');
    fakes.discord.addFault({ method: 'PUT', path: rolePath(), times: 100, status: 502 });
    const event = await queue(broken);
    expect(event).toMatchObject({
      kind: 'role_failed',
      details: { detail: expect.stringContaining('gave up after 2 attempt(s)') },
    });
    // 2 worker attempts × (1 + 3 discord.js retries).
    expect(roleEdits(fakes, guild.id, broken, role)).toHaveLength(8);
    expect(memberRoles(fakes, guild, broken)).toEqual([]);
  });

  it('a store that fails (a dropped database connection) pauses the guild’s loop; the change is applied after', async () => {
    const userId = await addMember(fakes, guild, 'jo');
    await store.enqueueRoleChange({
      guildId: guild.id,
      userId,
      roleId: role,
      op: 'add',
      reason: 'web3 gating: test',
    });
    const failing = Object.create(store) as GatingStore;
    let failures = 0;
    failing.claimRoleChanges = async (...args) => {
      if (failures < 3) {
        failures += 1;
        throw Object.assign(new Error('terminating connection due to administrator command'), {
          code: '57P01',
        });
      }
      return store.claimRoleChanges(...args);
    };
    const resilient = new RoleWorker({
      store: failing,
      discord: fakes.client,
      logger: silentLogger,
      notices: { post: () => {} },
      pollMs: 10,
    });
    resilient.kick(guild.id);
    // Back after three failures (10, 20, 40 ms pauses).
    await waitFor(() => memberRoles(fakes, guild, userId).includes(role));
    expect(failures).toBe(3);
    await resilient.idle(guild.id);
    expect(await store.pendingRoleChanges(guild.id)).toBe(0);
    await resilient.stop(1_000);
  });

  it('takes no new change after stop, leaving it for the next start', async () => {
    const userId = await addMember(fakes, guild, 'ida');
    await worker.stop(1_000);
    await store.enqueueRoleChange({
      guildId: guild.id,
      userId,
      roleId: role,
      op: 'add',
      reason: 'web3 gating: test',
    });
    worker.kick(guild.id);
    await worker.idle(guild.id);
    expect(await store.pendingRoleChanges(guild.id)).toBe(1);
    expect(roleEdits(fakes, guild.id, userId, role)).toEqual([]);
  });
});

describe('LogChannel', () => {
  it('gathers lines into one message, sent without pings', async () => {
    const log = new LogChannel({
      discord: fakes.client,
      logger: silentLogger,
      channelOf: async () => guild.textChannelId,
      flushMs: 20,
      text: asIs,
    });
    log.post(guild.id, line('first <@1>'));
    log.post(guild.id, line('second\nline'));
    await log.idle();
    expect(channelMessages(fakes, guild.textChannelId)).toEqual(['first <@1>\nsecond line']);
    const [post] = fakes.discord.requests.filter(
      (r) => r.method === 'POST' && r.path === `/channels/${guild.textChannelId}/messages`,
    );
    expect(post?.body).toMatchObject({ allowed_mentions: { parse: [] } });
    await log.stop(100);
    log.post(guild.id, line('after stop'));
    await log.idle();
    expect(channelMessages(fakes, guild.textChannelId)).toHaveLength(1);
  });

  it('posts nothing without a log channel and survives a channel it cannot post to', async () => {
    const none = new LogChannel({
      discord: fakes.client,
      logger: silentLogger,
      channelOf: async () => null,
      flushMs: 1,
      text: asIs,
    });
    none.post(guild.id, line('nobody reads this'));
    await none.idle();
    const broken = new LogChannel({
      discord: fakes.client,
      logger: silentLogger,
      channelOf: async () => '123456789012345678',
      flushMs: 1,
      text: asIs,
    });
    broken.post(guild.id, line('lost'));
    await expect(broken.idle()).resolves.toBeUndefined();
    expect(channelMessages(fakes, guild.textChannelId)).toEqual([]);
  });
});

describe('lease expiry: a worker whose claim lapsed never edits over a newer change', () => {
  it('a frozen worker resumes after another applied the newer opposite change, and edits nothing', async () => {
    const shared = await openStore({ leaseMs: 100 });
    let thaw: () => void = () => {};
    const frozen = new Promise<void>((resolve) => {
      thaw = resolve;
    });
    let frozenAt = 0;
    // Worker A's process freezes (a long GC pause, SIGSTOP) right before its edit: renewals wait.
    const stalled: GatingStore = new Proxy(shared, {
      get(target, name, receiver) {
        if (name === 'renewRoleChange') {
          return async (id: number, token: string) => {
            frozenAt ||= Date.now();
            await frozen;
            return target.renewRoleChange(id, token);
          };
        }
        const value = Reflect.get(target, name, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const options = { discord: fakes.client, logger: silentLogger, notices: { post() {} }, pollMs: 20 };
    const a = new RoleWorker({ ...options, store: stalled, leaseMs: 100 });
    const b = new RoleWorker({ ...options, store: shared, leaseMs: 100 });
    try {
      const userId = await addMember(fakes, guild, 'lea');
      const change = { guildId: guild.id, userId, roleId: role, reason: 'web3 gating: test' };
      await shared.enqueueRoleChange({ ...change, op: 'add' });
      a.kick(guild.id);
      await waitFor(() => frozenAt > 0);
      await new Promise((resolve) => setTimeout(resolve, 150));
      // Meanwhile the member lost the credential: a newer removal is queued, and worker B takes over.
      await shared.enqueueRoleChange({ ...change, op: 'remove' });
      b.kick(guild.id);
      await waitFor(() => roleEdits(fakes, guild.id, userId, role, 'DELETE').length === 1, 3_000);
      await b.idle(guild.id);
      thaw();
      await a.idle(guild.id);
      expect(memberRoles(fakes, guild, userId)).toEqual([]);
      expect(roleEdits(fakes, guild.id, userId, role).map((r) => r.method)).toEqual(['PUT', 'DELETE']);
      expect(await shared.pendingRoleChanges(guild.id)).toBe(0);
    } finally {
      thaw();
      await a.stop(1_000);
      await b.stop(1_000);
      await shared.close();
    }
  });

  it('a change claimed too many times without finishing is given up on, and the log channel says so', async () => {
    const shared = await openStore({ leaseMs: 1 });
    const userId = await addMember(fakes, guild, 'max');
    await shared.enqueueRoleChange({
      guildId: guild.id,
      userId,
      roleId: role,
      op: 'add',
      reason: 'web3 gating: t',
    });
    // Five workers claimed it and died before finishing.
    for (let i = 0; i < MAX_CLAIMS; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 3));
      expect(await shared.claimRoleChanges(guild.id, 1)).toHaveLength(1);
    }
    await new Promise((resolve) => setTimeout(resolve, 3));
    const lines: string[] = [];
    const last = new RoleWorker({
      store: shared,
      discord: fakes.client,
      logger: silentLogger,
      notices: { post: (_guildId, notice) => lines.push(gatingNoticeText(notice)) },
      pollMs: 20,
    });
    try {
      last.kick(guild.id);
      await last.idle(guild.id);
      expect(roleEdits(fakes, guild.id, userId, role)).toEqual([]);
      const [event] = await shared.listAuditEvents({ guildId: guild.id, userId, limit: 1 });
      expect(event).toMatchObject({ kind: 'role_failed' });
      expect(lines.join('\n')).toContain(`given up on after ${MAX_CLAIMS} tries`);
    } finally {
      await last.stop(1_000);
      await shared.close();
    }
  });
});
