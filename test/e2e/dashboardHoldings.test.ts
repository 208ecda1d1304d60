/**
 * Holdings rules (issue #35) on the owners' dashboard's rule form, as a browser uses it: the same contract
 * check, dry run and Apply as `/gating rule add`; a refusal worded as the command words it; a failing chain
 * on the health page.
 */
import { afterEach, expect, it } from 'vitest';
import { TEST_NFT as NFT, TEST_TOKEN as TOKEN } from '../../fakes/chains/contracts.ts';
import { type FakeEvmRpc, startFakeEvmRpc } from '../../fakes/chains/evmRpc.ts';
import { csrfOf, signIn, startDashboard, textOf, untilSnapshot } from './dashboardHarness.ts';
import { addGuildRole, closeGating, gatingCommandRun, hasRole, setup, waitFor } from './gatingHarness.ts';
import { ALICE } from './harness.ts';

const WALLET = '0x00000000000000000000000000000000000a1100';

let evm: FakeEvmRpc | undefined;
afterEach(async () => {
  await closeGating();
  await evm?.close();
});

it('adds a token rule through the dry run and Apply, refuses an NFT as a token, and names a failing chain in health', async () => {
  evm = await startFakeEvmRpc(8453);
  evm.addToken(TOKEN, 'erc20', 6);
  evm.addToken(NFT, 'erc721');
  evm.setBalance(TOKEN, WALLET, 150_000_000n);
  const d = await startDashboard({ env: { BASE_RPC_URL: evm.url, GATING_CONFIRM_MINUTES: '0' } });
  await setup(d.g);
  const holders = await addGuildRole(d.g, 'Holders', 4);
  await untilSnapshot(d.g, d.g.guildId, [holders]);
  await d.g.gating.store.saveLink(
    {
      guildId: d.g.guildId,
      userId: ALICE,
      identity: WALLET,
      platform: 'ethereum',
      address: WALLET,
      proofMethod: 'signature',
      provenAt: Date.now(),
    },
    'verified by signature',
  );
  const owner = await signIn(d, d.g.ownerId);
  const base = `/dashboard/${d.g.guildId}`;
  const csrf = csrfOf((await owner.get(`${base}/rules`)).text);
  const post = (value: string, kind = 'token') =>
    owner.post(`${base}/rules/preview`, { csrf, role: holders, kind, value });

  expect(textOf((await post(`base:${NFT}:1`)).text)).toContain('That contract is not a token on base');
  expect(textOf((await post(`polygon:${TOKEN}:1`)).text)).toContain('The polygon chain is not configured');
  const preview = await post(`base:${TOKEN}:100`);
  expect(textOf(preview.text)).toMatch(/1 would gain Holders and 0 would lose it/);
  const apply = Object.fromEntries(
    [...preview.text.matchAll(/<input type="hidden" name="(role|condition|match)" value="([^"]*)">/g)].map(
      (m) => [m[1], m[2]],
    ),
  );
  expect(apply).toEqual({ role: holders, condition: `token:base:${TOKEN}:100`, match: '' });
  const applied = await owner.post(`${base}/rules/apply`, { csrf, ...apply } as Record<string, string>);
  expect(textOf(applied.text)).toContain(`Stored for Holders: all of: at least 100 of base:${TOKEN}`);
  await d.g.gating.service.idle(d.g.guildId);
  await waitFor(() => hasRole(d.g, ALICE, holders), 'the holders role');

  evm.setMode('unavailable');
  await gatingCommandRun(d.g, 'recheck');
  await d.g.gating.service.idle(d.g.guildId);
  expect(hasRole(d.g, ALICE, holders)).toBe(true);
  expect(textOf((await owner.get(`${base}/health`)).text)).toContain('Chain nodes failing: base.');
});
