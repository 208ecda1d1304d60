/**
 * The HTTP side of the stand-in chain nodes: a JSON-RPC server on 127.0.0.1 that answers one request or a
 * batch array with `answer`, counts requests, and plays the node's mode (`setMode`): 503 to every request
 * while 'unavailable'; any other mode is the answer's to read.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type JsonRpcRequest = { id?: unknown; method?: string; params?: unknown[] };

export async function startJsonRpcServer<Mode extends string>(o: {
  port: number;
  /** The mode the node starts in. */
  mode: Mode;
  answer: (request: JsonRpcRequest, mode: Mode) => object;
  /** Requests received (a batch array counts once). */
  counts: { requests: number };
}): Promise<{ url: string; setMode(mode: Mode): void; close(): Promise<void> }> {
  let mode = o.mode;
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    o.counts.requests += 1;
    if (mode === 'unavailable') {
      res.writeHead(503).end('unavailable');
      return;
    }
    const body: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    const out = Array.isArray(body)
      ? body.map((r) => o.answer(r, mode))
      : o.answer(body as JsonRpcRequest, mode);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(out));
  }
  const server = createServer((req, res) => {
    handle(req, res).catch(() => res.writeHead(400).end());
  });
  await new Promise<void>((resolve) => server.listen(o.port, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    setMode: (next) => {
      mode = next;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
