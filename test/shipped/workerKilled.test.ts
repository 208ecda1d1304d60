/**
 * The split deployment (a web replica and the gateway worker, as split.test.ts starts them) with the
 * worker SIGKILLed in the middle of a moderator's `/gating recheck`, after some of its role edits, and
 * started again: the new worker takes the hand-off over with the dead worker's re-check lease, finishes
 * the pass, and answers once. Read back through the stand-in Discord's recorded requests: every member
 * holds the role, each got it by one edit, and the interaction got one answer (issue #33).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeGuild, RecordedRestRequest } from '../../fakes/discord/server.ts';
import { gatingCredentials, nextAddress } from '../../fakes/web3bio/builders.ts';
import { openPostgresStore } from '../../src/store/index.ts';
import { humanRoleSettings, signatureLink, visibleMessage } from '../e2e/harness.ts';
import { freePort } from '../e2e/processes.ts';
import { type Stage, startStage } from './scenario.ts';
import { READY, type ShippedProcess, startShipped } from './shippedBot.ts';

const MEMBERS = 24;
/** Each credential answer takes this long: with 8 lookups at once, the walk takes three of them (9 s). */
const UPSTREAM_LATENCY_MS = 3_000;
const EDITS_PER_SECOND = 4;
const EDITS_BEFORE_THE_KILL = 4;

describe('npm start split: the gateway worker SIGKILLed mid `/gating recheck`, then started again', () => {
  let stage: Stage;
  let guild: FakeGuild;
  let human: string;
  let members: string[];
  const processes: ShippedProcess[] = [];

  beforeAll(async () => {
    stage = await startStage('killed');
    guild = stage.discord.addGuild({ name: 'Killed Guild' });
    human = stage.discord.addRole(guild.id, { name: 'Verified Human', position: 2 }).id;
    members = Array.from({ length: MEMBERS }, (_, i) => {
      const id = `50000000000000${String(i).padStart(4, '0')}`;
      stage.discord.addMember(guild.id, { id, username: `killed${i}` });
      stage.upstream.world.setCredentials(`killed${i}.eth`, gatingCredentials(`killed${i}.eth`));
      return id;
    });
    // What earlier verifications left: gating set up, signature-proven links, a pass not due yet.
    const store = await openPostgresStore(stage.databaseUrl);
    try {
      await store.saveGuildSettings(humanRoleSettings(guild.id, human));
      for (const [i, userId] of members.entries())
        await store.saveLink(
          signatureLink(guild.id, userId, `killed${i}.eth`, nextAddress()),
          'shipped suite: linked before',
        );
      await store.markFullSync(guild.id, Date.now());
    } finally {
      await store.close();
    }
  }, 60_000);

  afterAll(async () => {
    await Promise.all(processes.map((p) => p.stop(0)));
    await stage?.close();
  });

  it('the restarted worker finishes the pass: every member holds the role, each by one edit, and one answer', async () => {
    // A dead holder is recognised within one lease: 3 s here, a minute by default.
    const env = { ...stage.env, INTERACTIONS: 'http', GATING_LEASE_SECONDS: '3' };
    const worker = async () => {
      const started = await startShipped(
        { ...env, PROCESS_ROLE: 'gateway', HTTP_PORT: String(await freePort()) },
        READY.bot,
      );
      processes.push(started);
      return started;
    };
    const first = await worker();
    const webPort = await freePort();
    processes.push(
      await startShipped({ ...env, PROCESS_ROLE: 'web', HTTP_PORT: String(webPort) }, READY.replica),
    );
    stage.discord.useInteractionsEndpoint(`http://127.0.0.1:${webPort}/interactions`);
    stage.upstream.setLatency(UPSTREAM_LATENCY_MS);
    stage.discord.limitRoleEdits(guild.id, EDITS_PER_SECOND);

    const edited = (r: RecordedRestRequest) => r.path.includes('/roles/') && r.status === 204;
    const answers = () => stage.discord.requests.filter((r) => r.path.startsWith('/webhooks/'));
    const recheck = stage.discord.runCommand({
      name: 'gating',
      guildId: guild.id,
      userId: guild.ownerId,
      options: [{ type: 1, name: 'recheck', options: [] } as never],
      until: 'done',
      timeoutMs: 90_000,
    });
    recheck.catch(() => undefined);
    await until(
      () => stage.discord.requests.filter(edited).length >= EDITS_BEFORE_THE_KILL,
      'the first role edits of the pass',
      30_000,
    );
    first.child.kill('SIGKILL');
    await first.exited;
    // Killed mid-pass: members left to edit, and the moderator not answered yet.
    const before = stage.discord.requests.filter(edited).length;
    expect(before).toBeLessThan(MEMBERS);
    expect(answers()).toEqual([]);
    stage.upstream.setLatency(0);

    const second = await worker();
    const result = await recheck;
    const text = JSON.stringify(visibleMessage(result));
    expect(text).not.toContain('Another process of this bot is re-checking this server');
    expect(text).toContain(String(MEMBERS));
    const holds = (userId: string) => guild.members.get(userId)?.roles.includes(human) ?? false;
    await until(() => members.every(holds), 'every member to hold the role', 30_000);

    // Each member's role by one edit (a 429 is Discord's refusal, not an edit), none taken away.
    for (const userId of members) {
      const path = `/guilds/${guild.id}/members/${userId}/roles/${human}`;
      const edits = stage.discord.requests.filter((r) => r.path === path && r.status === 204);
      expect(
        edits.map((r) => r.method),
        `edits of ${userId}`,
      ).toEqual(['PUT']);
    }
    // One answer to the moderator's interaction: the deferred reply edited once, no follow-up.
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(answers().map((r) => `${r.method} ${r.path.endsWith('/messages/@original')}`)).toEqual([
      'PATCH true',
    ]);
    expect(second.logLines().some((l) => l.msg === 'handed-over interaction answered')).toBe(true);
  }, 150_000);
});

async function until(condition: () => boolean, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
