/**
 * The offline Farcaster stand-ins of `npm run fake-api`: the bot's own relay client opens a channel, the
 * approval link's page (the stand-in Farcaster app) approves as the demo account, and what comes back is
 * a Sign In With Farcaster message the bot's checks and chain reads accept.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { startFarcasterStandIns } from '../../fakes/farcaster/demo.ts';
import { optimismChain } from '../../src/gating/proofs/farcasterChain.ts';
import { checkSignInMessage } from '../../src/gating/proofs/farcasterMessage.ts';
import { FarcasterRelay } from '../../src/gating/proofs/farcasterRelay.ts';

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

describe('the offline Farcaster stand-ins', () => {
  it("the approval link's page approves as the demo account (FID 3), and the bot's checks accept it", async () => {
    const standIns = await startFarcasterStandIns();
    stops.push(standIns.close);
    const now = Date.now();
    const asked = {
      domain: 'localhost:8080',
      uri: 'http://localhost:8080/farcaster/0123456789abcdef0123456789abcdef',
      nonce: '0123456789abcdef0123456789abcdef',
      requestId: 'discord:user:1:server:2',
      fid: 3,
      createdAt: now,
      expiresAt: now + 600_000,
    };
    const relay = new FarcasterRelay(standIns.relay.url);
    const channel = await relay.open({
      siweUri: asked.uri,
      domain: asked.domain,
      nonce: asked.nonce,
      requestId: asked.requestId,
      expirationTime: new Date(asked.expiresAt).toISOString(),
    });
    const page = await (await fetch(channel.url)).text();
    expect(page).toContain('Sign in to localhost:8080?');
    expect(page).toContain('Approve as @dwr (FID 3)');
    const approved = await fetch(`${standIns.relay.url}/~/siwf/approve`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ channelToken: channel.channelToken, fid: '3' }).toString(),
    });
    expect(approved.status).toBe(200);
    const status = await relay.status(channel.channelToken);
    if (status.state !== 'completed') throw new Error('not completed');
    const checked = await checkSignInMessage(asked, status.message, status.signature, Date.now());
    if (!checked.ok) throw new Error(checked.reason);
    const chain = optimismChain(standIns.node.url, () => {});
    await expect(chain.standing(3, checked.checked.signer)).resolves.toBe('custody');
  });
});
