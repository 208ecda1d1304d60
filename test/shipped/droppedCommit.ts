/**
 * A step the gating deployments act out after the scenario (scenario.ts): the built bot's `/verify`
 * whose COMMIT the database's connection ends while it runs, as a failover would. A deferred trigger of
 * the test's own (on its own database) makes that one COMMIT slow, so the test ends the connection in
 * the middle of it, every run. The bundle asks PostgreSQL by the transaction's id whether it committed
 * (it did not), runs the transaction again, and the member is linked by that one `/verify`.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { expect, it } from 'vitest';
import { ensProfile, gatingCredentials, nextAddress } from '../../fakes/web3bio/builders.ts';
import { toCommandOptions, visibleMessage } from '../e2e/harness.ts';
import type { Deployment } from './scenario.ts';

const ERIN = '300000000000000005';

/** Registers the step; `deployment` is read when it runs. */
export function actOutDroppedCommit(deployment: () => Deployment): void {
  it('/verify whose COMMIT is ended by the database mid-way: asked, run again, linked by that one command', async () => {
    const d = deployment();
    d.discord.addMember(d.guild.id, { id: ERIN, username: 'erin' }, { dispatchJoin: true });
    d.upstream.world.addProfile(ensProfile('erin.eth', nextAddress(), 'erin'));
    d.upstream.world.setCredentials('erin.eth', gatingCredentials('erin.eth', { human: true }));
    const admin = new pg.Client({ connectionString: d.databaseUrl });
    await admin.connect();
    try {
      await admin.query(`CREATE SEQUENCE erin_commits;
        CREATE FUNCTION erin_slow_commit() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.identity = 'erin.eth' THEN
            IF nextval('erin_commits') = 1 THEN PERFORM pg_sleep(5); END IF;
          END IF;
          RETURN NULL;
        END $$;
        CREATE CONSTRAINT TRIGGER erin_slow_commit AFTER INSERT ON links
          DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION erin_slow_commit()`);
      const answer = d.discord.runCommand({
        name: 'verify',
        guildId: d.guild.id,
        userId: ERIN,
        options: toCommandOptions({ identity: 'erin.eth' }),
        timeoutMs: 20_000,
      });
      const ended = await endSlowCommit(admin);
      expect(ended).toEqual([{ done: true }]);
      expect(JSON.stringify(visibleMessage(await answer))).toContain('is now linked');
      // Run twice (the first try's COMMIT ended, the second's fast), written once.
      const { rows: commits } = await admin.query('SELECT last_value FROM erin_commits');
      expect(commits).toEqual([{ last_value: '2' }]);
      const { rows: linked } = await admin.query(
        'SELECT user_id, proof_method FROM links WHERE guild_id = $1 AND identity = $2 AND released_at IS NULL',
        [d.guild.id, 'erin.eth'],
      );
      expect(linked).toEqual([{ user_id: ERIN, proof_method: 'record' }]);
    } finally {
      await admin.query(`DROP TRIGGER IF EXISTS erin_slow_commit ON links;
        DROP FUNCTION IF EXISTS erin_slow_commit(); DROP SEQUENCE IF EXISTS erin_commits`);
      await admin.end();
    }
  });
}

/** Ends the backend whose COMMIT sleeps in the trigger, once it is seen (within 10 s). */
async function endSlowCommit(admin: pg.Client): Promise<unknown[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const { rows } = await admin.query(
      `SELECT pg_terminate_backend(pid) AS done FROM pg_stat_activity
       WHERE datname = current_database() AND query = 'COMMIT' AND wait_event = 'PgSleep'`,
    );
    if (rows.length > 0) return rows;
    if (Date.now() > deadline) throw new Error('timed out waiting for the slow COMMIT');
    await sleep(25);
  }
}
