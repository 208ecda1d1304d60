/** The holdings benchmark (issue #35) in a small run: its table, its count of eth_calls and its verdict. */
import { expect, it } from 'vitest';
import { runHoldingsBench } from '../../bench/holdings.ts';

it('reads 3 holdings rules for 1,000 wallets in pages of 500 within the eth_call target, beside the floor', async () => {
  const [table] = await runHoldingsBench({ wallets: 1_000 });
  const rows = table?.rows ?? [];
  expect(rows).toHaveLength(2);
  const [holdings, floor] = rows;
  // Two pages of 1,500 reads: two eth_calls each (1,000 + 500), the decimals riding along in the first.
  expect(holdings?.[3]).toBe('4');
  expect(holdings?.at(-1)).toBe('PASS');
  expect(floor?.[3]).toBe('0');
});
