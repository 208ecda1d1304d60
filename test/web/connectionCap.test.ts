/**
 * The per-address connection cap (server.ts) counts an IPv6 client by its /64, the prefix the rate limits
 * key on (issue #33): one host holding a whole prefix cannot open the cap's worth from each of its
 * addresses. This machine's loopback has one IPv6 address, so the connections are played by stand-in
 * sockets handed to the server's 'connection' listeners, as Node hands it real ones.
 */
import { EventEmitter } from 'node:events';
import type { Server } from 'node:http';
import { describe, expect, it } from 'vitest';
import { capPerClient } from '../../src/web/server.ts';

/** A connection as the cap sees it: its peer address, and whether the server destroyed it. */
class PeerSocket extends EventEmitter {
  destroyed = false;
  readonly remoteAddress: string;
  constructor(remoteAddress: string) {
    super();
    this.remoteAddress = remoteAddress;
  }
  destroy(): void {
    this.destroyed = true;
    this.emit('close');
  }
}

function cappedServer(max: number, exempt: (address: string) => boolean = () => false) {
  const server = new EventEmitter();
  capPerClient(server as unknown as Server, max, exempt);
  return (address: string) => {
    const socket = new PeerSocket(address);
    server.emit('connection', socket);
    return socket;
  };
}

describe('connections per client', () => {
  it('IPv6 addresses of one /64 share the cap; another /64 has its own', () => {
    const connect = cappedServer(4);
    const sameHost = Array.from({ length: 6 }, (_, i) => connect(`2001:db8:1:2::${(i + 1).toString(16)}`));
    expect(sameHost.map((socket) => socket.destroyed)).toEqual([false, false, false, false, true, true]);
    // A neighbour in another /64, and the same host's prefix written out in full, count apart / together.
    expect(connect('2001:db8:1:3::1').destroyed).toBe(false);
    expect(connect('2001:0db8:0001:0002:ffff:ffff:ffff:ffff').destroyed).toBe(true);
    // One of the host's connections closes: the prefix may open one more, not two.
    sameHost[0]?.emit('close');
    expect(connect('2001:db8:1:2::99').destroyed).toBe(false);
    expect(connect('2001:db8:1:2::9a').destroyed).toBe(true);
  });

  it('the control: IPv4 addresses count one by one, an IPv4-mapped one as its IPv4 address', () => {
    const connect = cappedServer(2);
    expect(
      [connect('192.0.2.1'), connect('192.0.2.2'), connect('192.0.2.3')].map((s) => s.destroyed),
    ).toEqual([false, false, false]);
    expect(connect('::ffff:192.0.2.1').destroyed).toBe(false);
    expect(connect('192.0.2.1').destroyed).toBe(true);
  });

  it('a trusted proxy is exempt, whatever its prefix holds', () => {
    const connect = cappedServer(1, (address) => address === '2001:db8:1:2::1');
    expect([connect('2001:db8:1:2::1'), connect('2001:db8:1:2::1')].map((s) => s.destroyed)).toEqual([
      false,
      false,
    ]);
    expect(connect('2001:db8:1:2::2').destroyed).toBe(false);
    expect(connect('2001:db8:1:2::3').destroyed).toBe(true);
  });
});
