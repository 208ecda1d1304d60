/**
 * Signing links bound to a Discord account (issue #8, section 1), end to end: the real bot, its verify
 * server and the stand-in Discord's OAuth2. A member sends their link to the wallet's owner; the
 * owner signs in to Discord as themselves and is turned away. Without the client secret, `/gating
 * status` says links are not bound.
 */
import { ed25519 } from '@noble/curves/ed25519';
import { base58 } from '@scure/base';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterEach, describe, expect, it } from 'vitest';
import { gatingCredentials } from '../../fakes/web3bio/builders.ts';
import { TestBrowser } from '../testBrowser.ts';
import {
  closeGating,
  embedOf,
  type GatingHarness,
  gatingCommandRun,
  hasRole,
  PUBLIC_URL,
  seen,
  setup,
  startGating,
  waitFor,
} from './gatingHarness.ts';
import { ALICE, BOB, visibleMessage } from './harness.ts';

afterEach(closeGating);

const CLIENT_SECRET = 'test-client-secret';

function browser(g: GatingHarness): TestBrowser {
  return new TestBrowser(PUBLIC_URL, () => g.gating.verifyUrl);
}

function linkIn(reply: ReturnType<typeof visibleMessage>): string {
  const button = (reply.components?.[0] as { components: { url?: string }[] } | undefined)?.components[0];
  if (!button?.url?.startsWith(`${PUBLIC_URL}/verify/`)) throw new Error(`no signing link: ${seen(reply)}`);
  return button.url;
}

/** From a browser that went through the sign-in: fetch the message, sign it with `wallet`, post it. */
async function sign(
  g: GatingHarness,
  b: TestBrowser,
  link: string,
  wallet: ReturnType<typeof privateKeyToAccount>,
) {
  const local = link.replace(PUBLIC_URL, g.gating.verifyUrl);
  const got = await fetch(`${local}/message`, { headers: { cookie: b.cookieHeader(`${local}/message`) } });
  if (!got.ok) return { status: got.status, body: (await got.json()) as { ok: boolean; reason?: string } };
  const { message } = (await got.json()) as { message: string };
  const sent = await fetch(local, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie: b.cookieHeader(local) },
    body: JSON.stringify({ signature: await wallet.signMessage({ message }) }),
  });
  return { status: sent.status, body: (await sent.json()) as { ok: boolean; reason?: string } };
}

describe('signing links bound to the Discord account', () => {
  it('without DISCORD_CLIENT_SECRET, /gating status warns that links are not bound', async () => {
    const g = await startGating();
    await setup(g);
    const status = embedOf(visibleMessage(await gatingCommandRun(g, 'status')));
    expect(status.fields?.find((f) => f.name === 'Signing links')?.value).toContain('DISCORD_CLIENT_SECRET');
  });

  it("a link sent to the wallet's owner is refused for them; its own account signs; status has no warning", async () => {
    const g = await startGating({ env: { DISCORD_CLIENT_SECRET: CLIENT_SECRET } });
    g.h.discord.oauth.allowRedirect(`${PUBLIC_URL}/oauth/callback`);
    await setup(g);
    const wallet = privateKeyToAccount(generatePrivateKey());
    const address = wallet.address.toLowerCase();
    g.h.upstream.world.setCredentials(address, gatingCredentials(address, { human: true }));

    // Bob asks for a link for Alice's wallet and sends it to her; she signs in to Discord as herself.
    const bobsLink = linkIn(
      visibleMessage(await g.h.run('verify', { identity: wallet.address }, { userId: BOB })),
    );
    g.h.discord.oauth.signInAs(ALICE);
    const alice = browser(g);
    const refused = await alice.open(bobsLink);
    expect(refused.status).toBe(403);
    expect(refused.text).toContain('This link belongs to someone else');
    expect(await sign(g, alice, bobsLink, wallet)).toMatchObject({
      status: 401,
      body: { reason: 'sign_in' },
    });
    expect(await g.gating.store.getUserLinks(g.guildId, BOB)).toEqual([]);

    // Alice's own link, opened by her, signs.
    const alicesLink = linkIn(
      visibleMessage(await g.h.run('verify', { identity: wallet.address }, { userId: ALICE })),
    );
    const page = await alice.open(alicesLink);
    expect(page.status).toBe(200);
    expect(page.text).toContain('Link your wallet to Discord');
    expect(await sign(g, alice, alicesLink, wallet)).toMatchObject({ status: 200, body: { ok: true } });
    await g.gating.service.idle(g.guildId);
    expect(await g.gating.store.getUserLinks(g.guildId, ALICE)).toEqual([
      expect.objectContaining({ proofMethod: 'signature', address: wallet.address.toLowerCase() }),
    ]);
    await waitFor(() => hasRole(g, ALICE, g.humanRoleId), 'the human role for Alice');
    expect(hasRole(g, BOB, g.humanRoleId)).toBe(false);

    const status = embedOf(visibleMessage(await gatingCommandRun(g, 'status')));
    expect(status.fields?.find((f) => f.name === 'Signing links')).toBeUndefined();
    expect(JSON.stringify(g.h.discord.requests.map((r) => r.body))).not.toContain(CLIENT_SECRET);
  });
});

describe('Solana wallets, end to end', () => {
  it('/verify of a Solana address signs in with Solana; the link keeps the base58 address and grants the role', async () => {
    const g = await startGating({ env: { DISCORD_CLIENT_SECRET: CLIENT_SECRET } });
    g.h.discord.oauth.allowRedirect(`${PUBLIC_URL}/oauth/callback`);
    g.h.discord.oauth.signInAs(ALICE);
    await setup(g);
    const secret = ed25519.utils.randomPrivateKey();
    const address = base58.encode(ed25519.getPublicKey(secret));
    g.h.upstream.world.setCredentials(address, gatingCredentials(address, { human: true }));

    const link = linkIn(visibleMessage(await g.h.run('verify', { identity: address }, { userId: ALICE })));
    const alice = browser(g);
    expect((await alice.open(link)).status).toBe(200);
    const local = link.replace(PUBLIC_URL, g.gating.verifyUrl);
    const got = (await (
      await fetch(`${local}/message`, { headers: { cookie: alice.cookieHeader(`${local}/message`) } })
    ).json()) as { message: string; signIn: { address: string } };
    expect(got.message).toContain('wants you to sign in with your Solana account:');
    expect(got.signIn.address).toBe(address);
    const signature = `0x${Buffer.from(ed25519.sign(new TextEncoder().encode(got.message), secret)).toString('hex')}`;
    const sent = await fetch(local, {
      method: 'POST',
      headers: { 'content-type': 'application/json', cookie: alice.cookieHeader(local) },
      body: JSON.stringify({ signature }),
    });
    expect(sent.status).toBe(200);
    await g.gating.service.idle(g.guildId);
    expect(await g.gating.store.getUserLinks(g.guildId, ALICE)).toEqual([
      expect.objectContaining({ identity: address, address, proofMethod: 'signature', platform: 'solana' }),
    ]);
    await waitFor(() => hasRole(g, ALICE, g.humanRoleId), 'the human role for Alice');
  });
});
