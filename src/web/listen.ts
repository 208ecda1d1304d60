import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * Listen on `host:port` (0: any free port) and resolve with the address to reach the server at
 * (`0.0.0.0` and `::` shown as 127.0.0.1), or reject when the port cannot be had.
 */
export async function listenHttp(
  server: Server,
  port: number,
  host: string,
): Promise<{ url: string; port: number }> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // A burst of connections waits in the kernel's queue rather than being dropped (capped by somaxconn).
    server.listen({ port, host, backlog: 4_096 }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.address === '0.0.0.0' || address.address === '::' ? '127.0.0.1' : address.address;
  return {
    url: `http://${shownHost.includes(':') ? `[${shownHost}]` : shownHost}:${address.port}`,
    port: address.port,
  };
}
