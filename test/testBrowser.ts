/**
 * One browser profile for black-box tests of the bot's pages: its cookies by name (each with its path, as a
 * browser keeps them), redirects followed by hand across the bot and the stand-in Discord, and forms sent
 * with the Origin a browser sends.
 */
export interface Answer {
  status: number;
  text: string;
  location: string | null;
  headers: Headers;
  /** Where the request really went (PUBLIC_URL mapped to the serving process). */
  sentTo: string;
}

/** A page reached by following redirects. */
export interface Visit {
  status: number;
  /** Where the last request really went. */
  url: string;
  text: string;
  /** Every URL passed through (where each request really went), the first one included. */
  hops: string[];
}

interface RequestOptions {
  method?: string;
  form?: Record<string, string>;
  /** A raw body (with its content-type among `headers`). */
  body?: string;
  headers?: Record<string, string>;
}

/**
 * One browser profile: its cookies by name (each with its path), following redirects by hand. With a
 * `publicUrl` it sends cookies to that site only and resolves relative paths against it; without one it
 * sends them to every host (a test of one server).
 */
export class TestBrowser {
  readonly cookies = new Map<string, { value: string; path: string }>();
  readonly publicUrl: string;
  /** Where a request to PUBLIC_URL really goes (a load balancer's choice of replica); default PUBLIC_URL. */
  readonly #via: (() => string) | undefined;
  readonly #served = new Set<string>();

  constructor(publicUrl = '', via?: () => string) {
    this.publicUrl = publicUrl;
    this.#via = via;
  }

  /** The Cookie header this browser sends to `url` (its path decides; the host is not checked). */
  cookieHeader(url: string | URL): string {
    const { pathname } = new URL(url);
    return [...this.cookies.entries()]
      .filter(
        ([, c]) => pathname === c.path || pathname.startsWith(c.path.endsWith('/') ? c.path : `${c.path}/`),
      )
      .map(([name, c]) => `${name}=${c.value}`)
      .join('; ');
  }

  cookie(name: string): string | undefined {
    return this.cookies.get(name)?.value;
  }

  #keep(url: URL, headers: Headers): void {
    for (const line of headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';').map((p) => p.trim());
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      const path = attributes.find((a) => a.toLowerCase().startsWith('path='))?.slice(5) ?? url.pathname;
      const maxAge = attributes.find((a) => a.toLowerCase().startsWith('max-age='));
      if (value === '' || (maxAge !== undefined && Number(maxAge.slice(8)) <= 0)) this.cookies.delete(name);
      else this.cookies.set(name, { value, path });
    }
  }

  /** The site's own URLs: PUBLIC_URL's, and the addresses it was served from (a test may open those). */
  #ours(target: URL): boolean {
    return (
      !this.publicUrl || target.origin === new URL(this.publicUrl).origin || this.#served.has(target.origin)
    );
  }

  /** One request as this browser makes it (cookies of this site only), without following redirects. */
  async request(url: string, init: RequestOptions = {}): Promise<Answer> {
    return this.#send(url, { ...init, headers: { 'accept-language': 'en-US', ...init.headers } });
  }

  async #send(url: string, init: RequestOptions): Promise<Answer> {
    const target = new URL(url, this.publicUrl || undefined);
    const ours = this.#ours(target);
    const headers: Record<string, string> = { ...init.headers };
    const cookie = ours ? this.cookieHeader(target) : '';
    if (cookie) headers.cookie = cookie;
    let body = init.body;
    if (init.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(init.form).toString();
    }
    const via =
      this.publicUrl && target.origin === new URL(this.publicUrl).origin ? this.#via?.() : undefined;
    const sent = via ? new URL(`${target.pathname}${target.search}`, via) : target;
    if (via) this.#served.add(sent.origin);
    const response = await fetch(sent, {
      method: init.method ?? (body === undefined ? 'GET' : 'POST'),
      headers,
      ...(body === undefined ? {} : { body }),
      redirect: 'manual',
    });
    if (ours) this.#keep(target, response.headers);
    return {
      status: response.status,
      // As the bytes came (a CSV's byte-order mark included).
      text: new TextDecoder('utf-8', { ignoreBOM: true }).decode(await response.arrayBuffer()),
      location: response.headers.get('location'),
      headers: response.headers,
      sentTo: sent.toString(),
    };
  }

  /** GET, following redirects (to Discord's authorize page and back) as a browser would. */
  async get(url: string, headers: Record<string, string> = {}): Promise<Answer & { url: string }> {
    let current = new URL(url, this.publicUrl || undefined).toString();
    for (let hops = 0; hops < 6; hops++) {
      const answer = await this.request(current, { headers });
      if (answer.status < 300 || answer.status >= 400 || !answer.location) return { ...answer, url: current };
      current = new URL(answer.location, current).toString();
    }
    throw new Error(`too many redirects from ${url}`);
  }

  /** Opens `url` (the first request as `init` says, no Accept-Language unless given) and follows up to 6 redirects. */
  async open(url: string, init: Omit<RequestOptions, 'form'> = {}): Promise<Visit> {
    const hops: string[] = [];
    let next = url;
    for (let i = 0; i < 7; i += 1) {
      const answer = await this.#send(next, init);
      hops.push(answer.sentTo);
      if (answer.status >= 300 && answer.status < 400 && answer.location) {
        next = new URL(answer.location, next).toString();
        init = {};
        continue;
      }
      return { status: answer.status, url: answer.sentTo, text: answer.text, hops };
    }
    throw new Error(`too many redirects from ${url}`);
  }

  /** A form POST from a page of this site: the Origin header a browser sends, and `sec-fetch-site`. */
  post(path: string, form: Record<string, string>, headers: Record<string, string> = {}): Promise<Answer> {
    return this.request(path, {
      form,
      headers: { origin: new URL(this.publicUrl).origin, 'sec-fetch-site': 'same-origin', ...headers },
    });
  }
}

/** The CSRF token the page's forms carry. */
export function csrfOf(html: string): string {
  const match = /name="csrf" value="([^"]+)"/.exec(html);
  if (!match?.[1]) throw new Error('no CSRF token on the page');
  return match[1];
}

/** The page's visible text, roughly: tags dropped, entities decoded, spaces collapsed. */
export function textOf(html: string): string {
  return html
    .replace(/<style[\s\S]*?<\/style>/g, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&#(\d+);/g, (_, code: string) => String.fromCharCode(Number(code)))
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();
}
