/**
 * The relay's answer is capped while it is read: a relay streaming a huge body is cut off at 64 KiB
 * (the connection closed, the sign-in failing as "relay unavailable") without the rest being read,
 * next to an honest relay whose answer, just under the cap, is read whole.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { FarcasterRelay, RelayUnavailableError } from '../../src/gating/proofs/farcasterRelay.ts';

const CAP = 64 * 1024;
const HUGE = 256 * 1024 * 1024;
const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function relayAt(handle: (res: ServerResponse) => void): Promise<string> {
  const server = createServer((_req, res) => handle(res));
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Streams `total` bytes of JSON-looking padding, 64 KiB a write, waiting for the socket to drain. */
function stream(res: ServerResponse, total: number, sent: { bytes: number; closed: boolean }): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  const chunk = Buffer.alloc(64 * 1024, 0x20);
  res.on('close', () => {
    sent.closed = true;
  });
  const pump = () => {
    while (sent.bytes < total && !sent.closed) {
      sent.bytes += chunk.length;
      if (!res.write(chunk)) return void res.once('drain', pump);
    }
    if (!sent.closed) res.end();
  };
  res.write('{"state":"pending"');
  pump();
}

describe('the Farcaster relay client', () => {
  it('cuts a 256 MiB answer off at 64 KiB and closes the connection, without reading the rest', async () => {
    const sent = { bytes: 0, closed: false };
    const url = await relayAt((res) => stream(res, HUGE, sent));
    const started = performance.now();
    const failure = await new FarcasterRelay(url).status('channel-token').catch((error: unknown) => error);
    await expect.poll(() => sent.closed).toBe(true);
    // What left the server before the close is the cap plus what the kernel's buffers held: a few MiB
    // at most on loopback, never the 256 MiB a read of the whole answer would take.
    expect(sent.bytes).toBeLessThan(16 * 1024 * 1024);
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(failure).toBeInstanceOf(RelayUnavailableError);
    expect((failure as Error).message).toBe(`relay answer larger than ${CAP} bytes`);
  });

  it('an honest answer just under the cap is read whole', async () => {
    const padding = ' '.repeat(CAP - 100);
    const url = await relayAt((res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`{"state":"pending"${padding}}`);
    });
    await expect(new FarcasterRelay(url).status('channel-token')).resolves.toEqual({ state: 'pending' });
  });

  it('an answer one byte over the cap is refused, even sent in one piece', async () => {
    const body = `{"state":"pending"${' '.repeat(CAP)}}`;
    expect(Buffer.byteLength(body)).toBeGreaterThan(CAP);
    const url = await relayAt((res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(body);
    });
    await expect(new FarcasterRelay(url).status('channel-token')).rejects.toThrow(RelayUnavailableError);
  });
});
