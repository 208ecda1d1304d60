/** Raw HTTP/1.1 requests on sockets of their own, for acting out slow and stalled uploads. */
import { connect, type Socket } from 'node:net';

/** An answer read from a raw socket: the status, the whole text, and whether the server closed the connection. */
export interface RawAnswer {
  status: number;
  text: string;
  closed: boolean;
}

/** A raw HTTP/1.1 request on its own socket: `head` is written at once; the body only as the test writes it. */
export class RawRequest {
  readonly socket: Socket;
  readonly answer: Promise<RawAnswer>;
  #text = '';

  constructor(port: number, head: string, localAddress = '127.0.0.1') {
    this.socket = connect({ host: '127.0.0.1', port, localAddress });
    this.socket.on('error', () => {});
    this.socket.write(head);
    this.answer = new Promise((resolve) => {
      const status = () => Number(/^HTTP\/1\.1 (\d{3})/.exec(this.#text)?.[1] ?? 0);
      this.socket.on('data', (chunk: Buffer) => {
        this.#text += chunk.toString('utf8');
      });
      this.socket.on('close', () => resolve({ status: status(), text: this.#text, closed: true }));
    });
  }

  /** Whether an answer's status line has arrived. */
  get answered(): boolean {
    return this.#text.startsWith('HTTP/1.1');
  }

  /** Resolves with the answer once its status line is in, or null when none came within `ms`. */
  async answerWithin(ms: number): Promise<RawAnswer | null> {
    const deadline = performance.now() + ms;
    while (performance.now() < deadline) {
      if (this.answered && this.#text.includes('\r\n\r\n')) {
        const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(this.#text)?.[1] ?? 0);
        return { status, text: this.#text, closed: this.socket.destroyed || this.socket.readableEnded };
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    return null;
  }

  close(): void {
    this.socket.destroy();
  }
}

/** The head of a POST to /interactions announcing `length` bytes of body, with the given extra headers. */
export function postHead(length: number, headers: Record<string, string> = {}): string {
  const lines = [
    'POST /interactions HTTP/1.1',
    'Host: bot.example.test',
    'Content-Type: application/json',
    `Content-Length: ${length}`,
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
  ];
  return `${lines.join('\r\n')}\r\n\r\n`;
}

/** Signature headers of the right shape with a timestamp `ageSeconds` old (not Discord's signature). */
export function shapedSignature(ageSeconds = 0): Record<string, string> {
  return {
    'X-Signature-Ed25519': 'ab'.repeat(64),
    'X-Signature-Timestamp': String(Math.floor(Date.now() / 1_000) - ageSeconds),
  };
}
