/**
 * A TCP link for tests that is slow to connect: each connection it accepts on 127.0.0.1 reaches the
 * target only `delayMs` later (a managed Redis over TLS, a server in another zone), then carries the
 * bytes both ways as they come. What the client sent meanwhile waits in the link.
 */
import { connect, createServer, type Socket } from 'node:net';
import { freePort } from './namedPort.ts';

export interface SlowLink {
  readonly port: number;
  close(): Promise<void>;
}

export async function startSlowLink(
  target: { host: string; port: number },
  delayMs: number,
): Promise<SlowLink> {
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const server = createServer((client) => {
    track(client);
    client.pause();
    const timer = setTimeout(() => {
      const upstream = connect(target.port, target.host, () => {
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
      });
      track(upstream);
      upstream.once('close', () => client.destroy());
      client.once('close', () => upstream.destroy());
    }, delayMs);
    client.once('close', () => clearTimeout(timer));
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    port,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
