/**
 * Regenerate the README screenshots: `node scripts/screenshots.ts`. Runs `npm run preview`'s code against
 * the stand-in Web3.bio (in-process), writes each page with offline images, and photographs the message
 * with Debian's Chromium into docs/screenshots/. Needs /usr/bin/chromium; uses no network.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium } from 'playwright-core';
import { runPreview } from '../src/cli/preview.ts';
import { startFakeWeb3Bio } from '../test/fakes/web3bio/server.ts';

/** Each README image: its file name and the preview command line that makes it. */
export const SCREENSHOTS = [
  { name: 'whois-vitalik', args: ['whois', 'identity=vitalik.eth'] },
  { name: 'whois-hostile', args: ['whois', 'identity=hostile.eth'] },
  { name: 'creds-spammer', args: ['creds', 'identity=spammer.eth'] },
  { name: 'domain-expiring', args: ['domain', 'name=expiring.eth'] },
  { name: 'avatar-vitalik', args: ['avatar', 'identity=vitalik.eth'] },
  { name: 'error-invalid-identity', args: ['whois', 'identity=../../x'] },
] as const;

const OUT_DIR = join(import.meta.dirname, '..', 'docs', 'screenshots');
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];

async function main(): Promise<void> {
  // Dates in the images should not depend on where they were taken.
  process.env.TZ = 'UTC';
  await mkdir(OUT_DIR, { recursive: true });
  const work = await mkdtemp(join(tmpdir(), 'preview-shots-'));
  const fake = await startFakeWeb3Bio();
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS });
  try {
    const context = await browser.newContext({ viewport: { width: 800, height: 600 }, deviceScaleFactor: 1 });
    // The pages must be complete offline: any request that leaves them is refused and reported.
    const leaks: string[] = [];
    await context.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith('file:') || url.startsWith('data:')) return route.continue();
      leaks.push(url);
      return route.abort();
    });
    const env = { WEB3BIO_API_URL: fake.url, WEB3BIO_RATE_LIMIT: 'off' };
    for (const shot of SCREENSHOTS) {
      const html = join(work, `${shot.name}.html`);
      const errors: string[] = [];
      const code = await runPreview([...shot.args, '--html', html, '--offline-images'], env, {
        out: () => {},
        err: (text) => errors.push(text),
      });
      if (code !== 0) throw new Error(`preview ${shot.args.join(' ')} exited ${code}: ${errors.join('\n')}`);
      const page = await context.newPage();
      const problems: string[] = [];
      page.on('pageerror', (error) => problems.push(error.message));
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(message.text());
      });
      await page.goto(pathToFileURL(html).href);
      await page.waitForFunction(() => customElements.get('discord-message') !== undefined);
      await page.evaluate(() => document.fonts.ready.then(() => undefined));
      const file = join(OUT_DIR, `${shot.name}.png`);
      await page.locator('discord-messages').screenshot({ path: file, animations: 'disabled' });
      await page.close();
      if (problems.length > 0) throw new Error(`${shot.name}: page errors:\n${problems.join('\n')}`);
      console.log(`docs/screenshots/${shot.name}.png  (${shot.args.join(' ')})`);
    }
    if (leaks.length > 0) throw new Error(`pages tried to reach the network:\n${leaks.join('\n')}`);
  } finally {
    await browser.close();
    await fake.close();
    await rm(work, { recursive: true, force: true });
  }
}

if (import.meta.main) await main();
