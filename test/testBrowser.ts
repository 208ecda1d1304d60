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
}

/** One browser profile: its cookies by name (each with its path), following redirects by hand. */
export class TestBrowser {
  readonly cookies = new Map<string, { value: string; path: string }>();
  readonly publicUrl: string;
  /** Where a request to PUBLIC_URL really goes (a load balancer's choice of replica); default PUBLIC_URL. */
  readonly #via: (() => string) | undefined;

  constructor(publicUrl: string, via?: () => string) {
    this.publicUrl = publicUrl;
    this.#via = via;
  }

  #cookieHeader(url: URL): string {
    return [...this.cookies.entries()]
      .filter(([, c]) => url.pathname === c.path || url.pathname.startsWith(`${c.path}/`) || c.path === '/')
      .map(([name, c]) => `${name}=${c.value}`)
      .join('; ');
  }

  #keep(url: URL, headers: Headers): void {
    for (const line of headers.getSetCookie()) {
      const [pair = '', ...attributes] = line.split(';').map((p) => p.trim());
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq);
      const value = pair.slice(eq + 1);
      const path = attributes.find((a) => a.toLowerCase().startsWith('path='))?.slice(5) ?? url.pathname;
      const maxAge = attributes.find((a) => a.toLowerCase().startsWith('max-age='));
      if (value === '' || maxAge?.toLowerCase() === 'max-age=0') this.cookies.delete(name);
      else this.cookies.set(name, { value, path });
    }
  }

  /** One request as this browser makes it (cookies of this site only), without following redirects. */
  async request(
    url: string,
    init: { method?: string; form?: Record<string, string>; headers?: Record<string, string> } = {},
  ): Promise<Answer> {
    const target = new URL(url, this.publicUrl);
    const ours = target.origin === new URL(this.publicUrl).origin;
    const headers: Record<string, string> = { 'accept-language': 'en-US', ...init.headers };
    const cookie = ours ? this.#cookieHeader(target) : '';
    if (cookie) headers.cookie = cookie;
    let body: string | undefined;
    if (init.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(init.form).toString();
    }
    const sent = ours && this.#via ? new URL(`${target.pathname}${target.search}`, this.#via()) : target;
    const response = await fetch(sent, {
      method: init.method ?? (init.form ? 'POST' : 'GET'),
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
    };
  }

  /** GET, following redirects (to Discord's authorize page and back) as a browser would. */
  async get(url: string, headers: Record<string, string> = {}): Promise<Answer & { url: string }> {
    let current = new URL(url, this.publicUrl).toString();
    for (let hops = 0; hops < 6; hops++) {
      const answer = await this.request(current, { headers });
      if (answer.status < 300 || answer.status >= 400 || !answer.location) return { ...answer, url: current };
      current = new URL(answer.location, current).toString();
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
