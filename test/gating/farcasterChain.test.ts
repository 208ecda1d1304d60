/**
 * The bot's reads of Farcaster's registries and of the relay, against the stand-ins (whose ABIs are
 * written apart from the bot's, from the contracts' interfaces): custody, auth addresses, a custody moved
 * away, a node that is down or on another chain; a relay channel opened, read pending, read completed
 * once, and gone.
 */
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeOptimism, startFakeOptimism } from '../../fakes/farcaster/optimism.ts';
import { type FakeRelay, startFakeRelay } from '../../fakes/farcaster/relay.ts';
import { optimismChain } from '../../src/gating/proofs/farcasterChain.ts';
import {
  ChannelGoneError,
  FarcasterRelay,
  RelayUnavailableError,
} from '../../src/gating/proofs/farcasterRelay.ts';

const open: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const server of open.splice(0)) await server.close();
});

async function chain(): Promise<{
  node: FakeOptimism;
  problems: unknown[];
  read: ReturnType<typeof optimismChain>;
}> {
  const node = await startFakeOptimism();
  open.push(node);
  const problems: unknown[] = [];
  return { node, problems, read: optimismChain(node.url, (p) => problems.push(p)) };
}

describe('optimismChain', () => {
  it('tells the custody address, a registered auth address and anyone else apart', async () => {
    const { node, read } = await chain();
    const custody = privateKeyToAccount(generatePrivateKey()).address;
    const auth = privateKeyToAccount(generatePrivateKey()).address;
    const stranger = privateKeyToAccount(generatePrivateKey()).address;
    node.setCustody(3, custody);
    node.addAuthAddress(3, auth);
    await expect(read.standing(3, custody)).resolves.toBe('custody');
    await expect(read.standing(3, auth)).resolves.toBe('authAddress');
    await expect(read.standing(3, stranger)).resolves.toBe('not_authorized');
    // An auth address of FID 3 is nothing to FID 4.
    await expect(read.standing(4, auth)).resolves.toBe('not_authorized');
    expect(node.calls.filter((c) => c.method === 'eth_call').map((c) => c.functionName)).toContain(
      'keyDataOf',
    );
  });

  it('follows a custody transfer and a removed auth address', async () => {
    const { node, read } = await chain();
    const before = privateKeyToAccount(generatePrivateKey()).address;
    const after = privateKeyToAccount(generatePrivateKey()).address;
    node.setCustody(7, before);
    node.addAuthAddress(7, after);
    await expect(read.standing(7, before)).resolves.toBe('custody');
    node.setCustody(7, after);
    node.removeAuthAddress(7, after);
    await expect(read.standing(7, before)).resolves.toBe('not_authorized');
    await expect(read.standing(7, after)).resolves.toBe('custody');
  });

  it('is unavailable (deciding nothing) when the node is down, errs, or is not OP Mainnet', async () => {
    const { node, problems, read } = await chain();
    const custody = privateKeyToAccount(generatePrivateKey()).address;
    node.setCustody(3, custody);
    node.setMode('unavailable');
    await expect(read.standing(3, custody)).resolves.toBe('unavailable');
    node.setMode('error');
    await expect(read.standing(3, custody)).resolves.toBe('unavailable');
    node.setMode('up');
    await expect(read.standing(3, custody)).resolves.toBe('custody');
    expect(problems.every((p) => (p as { kind: string }).kind === 'unreachable')).toBe(true);
    expect(problems.length).toBeGreaterThanOrEqual(2);

    const unreachable = optimismChain('http://127.0.0.1:9', () => {});
    await expect(unreachable.standing(3, custody)).resolves.toBe('unavailable');

    // An Ethereum mainnet node would answer "no custody" for every FID: it is refused as unavailable.
    const other = await chain();
    other.node.setCustody(3, custody);
    other.node.setChainId(1);
    await expect(other.read.standing(3, custody)).resolves.toBe('unavailable');
    expect(other.problems).toEqual([{ kind: 'wrong_chain', chainId: 1 }]);
    expect(other.node.calls.filter((c) => c.method === 'eth_call')).toEqual([]);
  });
});

describe('FarcasterRelay', () => {
  async function relay(): Promise<{ fake: FakeRelay; client: FarcasterRelay }> {
    const fake = await startFakeRelay();
    open.push(fake);
    return { fake, client: new FarcasterRelay(`${fake.url}/`) };
  }
  const request = {
    siweUri: 'https://verify.example.test/farcaster/0123456789abcdef0123456789abcdef',
    domain: 'verify.example.test',
    nonce: '0123456789abcdef0123456789abcdef',
    expirationTime: new Date(Date.now() + 600_000).toISOString(),
    requestId: 'discord:user:1:server:2',
  };

  it('opens a channel, reads it pending, then completed once; a second read finds it gone', async () => {
    const { fake, client } = await relay();
    const opened = await client.open(request);
    expect(opened.url).toBe(`${fake.url}/~/siwf?channelToken=${opened.channelToken}`);
    expect(fake.requests[0]?.body).toEqual({ ...request, acceptAuthAddress: true });
    await expect(client.status(opened.channelToken)).resolves.toEqual({ state: 'pending' });
    const account = privateKeyToAccount(generatePrivateKey());
    await fake.approve(opened.channelToken, { account, fid: 3 });
    const done = await client.status(opened.channelToken);
    expect(done).toMatchObject({ state: 'completed', fid: 3 });
    expect(String((done as { message: string }).message)).toContain('Request ID: discord:user:1:server:2');
    await expect(client.status(opened.channelToken)).rejects.toBeInstanceOf(ChannelGoneError);
  });

  it('is unavailable when the relay is down or unreachable', async () => {
    const { fake, client } = await relay();
    fake.setMode('down');
    await expect(client.open(request)).rejects.toBeInstanceOf(RelayUnavailableError);
    await expect(client.status('ABCDEFGH')).rejects.toBeInstanceOf(RelayUnavailableError);
    fake.setMode('up');
    await expect(new FarcasterRelay('http://127.0.0.1:9').open(request)).rejects.toBeInstanceOf(
      RelayUnavailableError,
    );
  });
});
