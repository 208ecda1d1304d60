import { describe, expect, it } from 'vitest';
import type { DashboardAnswer, DashboardRequest } from '../../../src/gating/dashboard/types.ts';
import { ViewerStandings } from '../../../src/web/dashboard/standing.ts';

/** Standings over an owning process that answers from `answers` in turn, counting the questions. */
function standings(answers: DashboardAnswer[], maxAgeMs = 5_000) {
  let now = 1_000_000;
  const asked: DashboardRequest[] = [];
  const s = new ViewerStandings({
    operations: {
      async run(request) {
        asked.push(request);
        const answer = answers.shift();
        if (!answer) throw new Error('asked once too often');
        return answer;
      },
    },
    maxAgeMs,
    now: () => now,
  });
  return { s, asked, later: (ms: number) => (now += ms) };
}
const standing = (allowed: boolean, timedOut = false): DashboardAnswer => ({
  kind: 'answered',
  result: { kind: 'standing', allowed, timedOut },
});

describe('ViewerStandings', () => {
  it('asks the owning process for this viewer and server, and keeps the answer for the rights’ age', async () => {
    const { s, asked, later } = standings([standing(true), standing(false, true)]);
    expect(await s.of('1', '7')).toBe('allowed');
    expect(asked).toEqual([{ op: 'standing', guildId: '1', actorId: '7' }]);
    later(4_999);
    expect(await s.of('1', '7')).toBe('allowed');
    expect(asked).toHaveLength(1);
    later(1);
    expect(await s.of('1', '7')).toBe('timed_out');
    expect(asked).toHaveLength(2);
  });

  it('reads no rights, a bot no longer in the server, and no answer apart; no answer is asked again', async () => {
    const { s, asked } = standings([
      standing(false),
      { kind: 'answered', result: { kind: 'unavailable' } },
      { kind: 'timeout' },
      { kind: 'answered', result: { kind: 'failed' } },
      standing(true),
    ]);
    expect(await s.of('1', '7')).toBe('no_rights');
    expect(await s.of('2', '7')).toBe('no_rights');
    expect(await s.of('3', '7')).toBe('no_answer');
    expect(await s.of('3', '7')).toBe('no_answer');
    expect(await s.of('3', '7')).toBe('allowed');
    expect(asked).toHaveLength(5);
  });
});
