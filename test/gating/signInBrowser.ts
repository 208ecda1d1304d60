/**
 * A minimal browser for black-box tests of the Discord sign-in: follows redirects across the bot's
 * server and the stand-in Discord, and keeps the bot's cookies by name and path (as a browser would,
 * so a test can also play a second browser that lacks them).
 */
export interface Visit {
  status: number;
  url: string;
  text: string;
  /** Every URL passed through, the first one included. */
  hops: string[];
}

export class TestBrowser {
  readonly #cookies = new Map<string, { value: string; path: string }>();
  /** Maps a public URL to where it is served (PUBLIC_URL to the verify server's local address). */
  readonly #rewrite: (url: string) => string;

  constructor(rewrite: (url: string) => string = (url) => url) {
    this.#rewrite = rewrite;
  }

  /** Opens `url` and follows up to 6 redirects. */
  async open(url: string, init: RequestInit = {}): Promise<Visit> {
    const hops: string[] = [];
    let next = this.#rewrite(url);
    for (let i = 0; i < 7; i += 1) {
      hops.push(next);
      const response = await fetch(next, {
        ...init,
        redirect: 'manual',
        headers: { ...(init.headers as Record<string, string>), cookie: this.cookieHeader(next) },
      });
      this.#remember(next, response.headers.getSetCookie());
      const location = response.headers.get('location');
      if (response.status >= 300 && response.status < 400 && location) {
        await response.arrayBuffer();
        next = this.#rewrite(new URL(location, next).toString());
        init = {};
        continue;
      }
      return { status: response.status, url: next, text: await response.text(), hops };
    }
    throw new Error(`too many redirects from ${url}`);
  }

  /** The Cookie header this browser sends to `url`. */
  cookieHeader(url: string): string {
    const path = new URL(url).pathname;
    return [...this.#cookies.entries()]
      .filter(([, c]) => path === c.path || path.startsWith(c.path.endsWith('/') ? c.path : `${c.path}/`))
      .map(([name, c]) => `${name}=${c.value}`)
      .join('; ');
  }

  cookie(name: string): string | undefined {
    return this.#cookies.get(name)?.value;
  }

  #remember(url: string, setCookies: string[]): void {
    for (const header of setCookies) {
      const [pair = '', ...attributes] = header.split(';').map((p) => p.trim());
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq);
      const path =
        attributes.find((a) => a.toLowerCase().startsWith('path='))?.slice(5) ?? new URL(url).pathname;
      const maxAge = attributes.find((a) => a.toLowerCase().startsWith('max-age='));
      if (maxAge !== undefined && Number(maxAge.slice(8)) <= 0) this.#cookies.delete(name);
      else this.#cookies.set(name, { value: pair.slice(eq + 1), path });
    }
  }
}
