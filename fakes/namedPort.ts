import { createServer } from 'node:net';

/**
 * Ports a test names up front (a PUBLIC_URL the browser must reach, a process told its port) come from
 * below the kernel's ephemeral range (32768-60999 here), where no `listen(0)` and no outgoing connection
 * of another test file is ever given one: a port probed free in that range was, with three files at once,
 * sometimes taken by another file's socket before the bot listened on it (EADDRINUSE in CI).
 */
const NAMED_PORTS = { from: 20_000, to: 32_000 };

/** A port free now, from NAMED_PORTS, for a server a test starts later on it. */
export async function freePort(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = NAMED_PORTS.from + Math.floor(Math.random() * (NAMED_PORTS.to - NAMED_PORTS.from));
    if (await isFree(port)) return port;
  }
  throw new Error('no free port found below the ephemeral range');
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}
