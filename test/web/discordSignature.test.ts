import { describe, expect, it } from 'vitest';
import { MAX_SIGNATURE_AGE_MS, SeenSignatures } from '../../src/web/discordSignature.ts';

const signature = (n: number) => n.toString(16).padStart(128, 'a');
const NOW = 1_800_000_000_000;

describe('SeenSignatures', () => {
  it('acts on a signature once, whatever its case', () => {
    const seen = new SeenSignatures();
    expect(seen.firstSighting(signature(1), NOW)).toBe(true);
    expect(seen.firstSighting(signature(1), NOW + 1_000)).toBe(false);
    expect(seen.firstSighting(signature(1).toUpperCase(), NOW + 2_000)).toBe(false);
    expect(seen.firstSighting(signature(2), NOW + 3_000)).toBe(true);
  });

  it('forgets a signature once its timestamp could no longer be accepted anyway', () => {
    const seen = new SeenSignatures();
    seen.firstSighting(signature(1), NOW);
    seen.firstSighting(signature(2), NOW + 60_000);
    const expired = NOW + 2 * MAX_SIGNATURE_AGE_MS;
    expect(seen.firstSighting(signature(3), expired)).toBe(true);
    expect(seen.size).toBe(2);
    expect(seen.firstSighting(signature(2), expired)).toBe(false);
    expect(seen.firstSighting(signature(1), expired)).toBe(true);
  });

  it('holds at most its limit, forgetting the oldest first, however many go through it', () => {
    const seen = new SeenSignatures(3);
    for (const n of [1, 2, 3, 4]) expect(seen.firstSighting(signature(n), NOW + n)).toBe(true);
    expect(seen.size).toBe(3);
    expect(seen.firstSighting(signature(4), NOW + 5)).toBe(false);
    expect(seen.firstSighting(signature(2), NOW + 6)).toBe(false);
    // 1 was forgotten to make room for 4; taking it back in forgets 2, the oldest left.
    expect(seen.firstSighting(signature(1), NOW + 7)).toBe(true);
    expect(seen.firstSighting(signature(2), NOW + 8)).toBe(true);
    for (let n = 10; n < 20_000; n++) seen.firstSighting(signature(n), NOW + n);
    expect(seen.size).toBe(3);
    expect(seen.firstSighting(signature(19_999), NOW + 20_000)).toBe(false);
  });
});
