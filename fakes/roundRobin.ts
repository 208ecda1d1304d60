/**
 * A round-robin HTTP load balancer for tests: each request goes to the next upstream in turn, with its
 * method, path, headers and body as they came, and the upstream's answer goes back unchanged.
 */
import { createServer, type IncomingMessage, request } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface RoundRobin {
  /** 'http://127.0.0.1:PORT'. */
  readonly url: string;
  /** The upstream each request went to, in arrival order. */
  readonly served: string[];
  close(): Promise<void>;
}

/** Headers that describe one connection, not the message (RFC 9110 §7.6.1). */
const HOP_BY_HOP = new Set(['connection', 'keep-alive']);

/** Starts the balancer on 127.0.0.1, on a free port, in front of `upstreams` (base URLs). */
export async function startRoundRobin(upstreams: string[]): Promise<RoundRobin> {
  if (upstreams.length === 0) throw new Error('startRoundRobin: no upstreams');
  const served: string[] = [];
  let next = 0;
  const server = createServer((req, res) => {
    const upstream = upstreams[next % upstreams.length] as string;
    next += 1;
    served.push(upstream);
    const target = new URL(upstream);
    const basePath = target.pathname.replace(/\/$/, '');
    const forwarded = request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: `${basePath}${req.url ?? '/'}`,
        headers: withoutHopByHop(req.rawHeaders),
      },
      (answer: IncomingMessage) => {
        res.writeHead(answer.statusCode ?? 502, answer.statusMessage, withoutHopByHop(answer.rawHeaders));
        answer.pipe(res);
      },
    );
    forwarded.on('error', (error) => {
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`round robin: ${upstream} failed: ${error.message}`);
    });
    req.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    served,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Raw `[name, value, name, value, …]` headers, as sent, minus the hop-by-hop ones. */
function withoutHopByHop(raw: string[]): string[] {
  const kept: string[] = [];
  for (let index = 0; index + 1 < raw.length; index += 2) {
    const name = raw[index] as string;
    if (!HOP_BY_HOP.has(name.toLowerCase())) kept.push(name, raw[index + 1] as string);
  }
  return kept;
}
