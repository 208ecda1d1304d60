/**
 * The owners' dashboard in headless Chromium, through the stand-in Discord (its authorize page and
 * `GET /users/@me/guilds`): sign-in, the server list, the overview with its charts, a rule added through
 * the dry run and Apply, and a held removal confirmed, the whole way by keyboard alone (Tab, arrows,
 * typing, Enter; no click). Every page is checked with axe-core (injected into the page): no serious or
 * critical violation. With UPDATE_SCREENSHOTS=1 the pages are photographed into docs/screenshots/.
 */
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gatingCredentials } from '../../fakes/web3bio/builders.ts';
import { UpstreamHealthSampler } from '../../src/app/upstreamHealth.ts';
import { launchChromium } from '../gating/chromium.ts';
import { type Dashboard, startDashboard, untilSnapshot } from './dashboardHarness.ts';
import {
  addGuildRole,
  addIdentity,
  addMember,
  closeGating,
  gatingCommandRun,
  hasRole,
  setup,
  verifyByRecord,
  waitFor,
} from './gatingHarness.ts';
import { scoreOf } from './ruleShortcuts.ts';

const AXE = fileURLToPath(new URL('../../node_modules/axe-core/axe.min.js', import.meta.url));
const SHOTS = fileURLToPath(new URL('../../docs/screenshots/', import.meta.url));
const UPDATE_SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === '1';

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

let browser: Browser;
let context: BrowserContext;
let d: Dashboard;
const humans: string[] = [];
let scorer = '';
let scored = '';

beforeAll(async () => {
  browser = await launchChromium();
  // Only so the test can inject axe-core: the pages themselves carry no script.
  context = await browser.newContext({ bypassCSP: true, viewport: { width: 1100, height: 900 } });
  d = await startDashboard({ guild: { name: 'Moonbeam DAO' } });
  await setup(d.g);
  for (let i = 0; i < 6; i += 1) {
    const id = await addMember(d.g, `member${i}`);
    addIdentity(d.g, `member${i}.eth`, { discordHandle: `member${i}`, human: true });
    await verifyByRecord(d.g, `member${i}.eth`, id);
    humans.push(id);
  }
  scorer = await addMember(d.g, 'scorer');
  addIdentity(d.g, 'scorer.eth', { discordHandle: 'scorer' });
  scoreOf(d.g, 'scorer.eth', 42);
  await verifyByRecord(d.g, 'scorer.eth', scorer);
  scored = await addGuildRole(d.g, 'Trusted', 4);
  await untilSnapshot(d.g, d.g.guildId, [scored]);
  await waitFor(() => humans.every((id) => hasRole(d.g, id, d.g.humanRoleId)), 'the members to be human');
  // A full pass counts the holders; the bot's own Web3.bio requests so far go into the upstream health.
  await gatingCommandRun(d.g, 'recheck');
  await d.g.gating.service.idle(d.g.guildId);
  await new UpstreamHealthSampler({
    metrics: d.g.h.bot.metrics,
    store: d.g.gating.store,
    logger: { warn() {} } as never,
  }).sample();
}, 90_000);
afterAll(async () => {
  await context?.close();
  await browser?.close();
  await closeGating();
});

/** axe-core on the page as it is: the violations that are serious or critical. */
async function seriousViolations(page: Page): Promise<string[]> {
  await page.addScriptTag({ path: AXE });
  const violations = await page.evaluate(async () => {
    const axe = (
      globalThis as unknown as { axe: { run(o: object): Promise<{ violations: AxeViolation[] }> } }
    ).axe;
    const result = await axe.run({
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] },
    });
    return result.violations;
  });
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** What has the keyboard focus: its tag, text and name. */
function focused(page: Page): Promise<string> {
  return page.evaluate(() => {
    const el = document.activeElement as HTMLElement | null;
    if (!el) return '';
    return `${el.tagName.toLowerCase()}|${(el.getAttribute('aria-label') ?? el.textContent ?? '').trim()}|${el.id}`;
  });
}

/** Presses Tab until the focused element matches (at most `max` times); keyboard only. */
async function tabTo(page: Page, matches: (focus: string) => boolean, max = 60): Promise<void> {
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab');
    if (matches(await focused(page))) return;
  }
  throw new Error(`Tab never reached the element; last focus: ${await focused(page)}`);
}

async function enterAndWait(page: Page): Promise<void> {
  await Promise.all([
    page.waitForLoadState('load'),
    page.waitForEvent('framenavigated'),
    page.keyboard.press('Enter'),
  ]);
  await page.waitForLoadState('load');
}

async function shoot(page: Page, name: string): Promise<void> {
  if (UPDATE_SCREENSHOTS)
    await page.screenshot({ path: `${SHOTS}${name}.png`, fullPage: true, animations: 'disabled' });
}

describe('the dashboard in Chromium, by keyboard alone', () => {
  it('signs in, lists the server, shows the overview, adds a rule through preview and Apply, confirms a held removal', async () => {
    const page = await context.newPage();
    const problems: string[] = [];
    page.on('pageerror', (error) => problems.push(error.message));
    // Every answer but the favicon (the pages have none: the browser asks anyway) is a success.
    page.on('response', (r) => {
      if (r.status() >= 400 && !r.url().endsWith('/favicon.ico')) problems.push(`${r.status()} ${r.url()}`);
    });
    page.on('console', (m) => {
      if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(m.text());
    });
    d.g.h.discord.oauth.signInAs(d.g.ownerId);

    // Sign-in: the stand-in Discord's authorize page answers at once, as Discord does once approved.
    const response = await page.goto(`${d.publicUrl}/dashboard`);
    expect(response?.status()).toBe(200);
    expect(page.url()).toBe(`${d.publicUrl}/dashboard`);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Your servers');
    expect(await seriousViolations(page)).toEqual([]);
    await shoot(page, 'dashboard-servers');

    // The list, by keyboard: the skip link comes first, then the server.
    await page.keyboard.press('Tab');
    expect(await focused(page)).toContain('Skip to the content');
    await tabTo(page, (f) => f.startsWith('a|') && f.includes('Moonbeam DAO'));
    await enterAndWait(page);
    expect(page.url()).toBe(`${d.publicUrl}/dashboard/${d.g.guildId}`);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Overview');
    await expect(page.getByRole('img', { name: /Roles given and removed per day/ }).count()).resolves.toBe(1);
    await expect(page.locator('svg[role="img"]').count()).resolves.toBe(5);
    expect(await page.locator('main').innerText()).toMatch(/Members holding Verified Human\s+6/);
    expect(await seriousViolations(page)).toEqual([]);
    await shoot(page, 'dashboard-overview');
    // A chart's table opens from the keyboard too.
    await tabTo(page, (f) => f.startsWith('summary|'));
    await page.keyboard.press('Enter');
    await expect(page.locator('details[open] table').count()).resolves.toBe(1);

    // Rules: the navigation link, then the form, field by field.
    await tabTo(page, (f) => f.startsWith('a|Rules'), 200);
    await enterAndWait(page);
    await expect(page.getByRole('heading', { level: 1 }).textContent()).resolves.toBe('Rules');
    await tabTo(page, (f) => f.endsWith('|rule-role'), 200);
    // Down the role list (highest first) to Trusted.
    for (let i = 0; i < 10 && (await page.locator('#rule-role').inputValue()) !== scored; i++)
      await page.keyboard.press('ArrowDown');
    expect(await page.locator('#rule-role').inputValue()).toBe(scored);
    await page.keyboard.press('Tab');
    expect(await focused(page)).toContain('|rule-kind');
    expect(await page.locator('#rule-kind').inputValue()).toBe('score');
    await page.keyboard.press('Tab');
    await page.keyboard.type('40');
    await tabTo(page, (f) => f.startsWith('button|Preview'));
    await enterAndWait(page);
    expect(await page.locator('main').innerText()).toContain('Dry run: nothing is stored yet');
    expect(await page.locator('main').innerText()).toMatch(/1 would gain Trusted/);
    expect(await d.g.gating.store.listRuleConditions(d.g.guildId)).toEqual([]);
    expect(await seriousViolations(page)).toEqual([]);
    await shoot(page, 'dashboard-rule-preview');
    await tabTo(page, (f) => f.startsWith('button|Apply'));
    await enterAndWait(page);
    expect(await page.locator('main').innerText()).toContain('Stored for Trusted');
    expect(await d.g.gating.store.listRuleConditions(d.g.guildId)).toMatchObject([
      { roleId: scored, condition: 'score:40' },
    ]);
    await d.g.gating.service.idle(d.g.guildId);
    await waitFor(() => hasRole(d.g, scorer, scored), 'the rule role to be given');
    expect(await seriousViolations(page)).toEqual([]);

    // A mass removal the breaker holds, confirmed from Held removals.
    for (let i = 0; i < humans.length; i += 1)
      d.g.h.upstream.world.setCredentials(
        `member${i}.eth`,
        gatingCredentials(`member${i}.eth`, { human: false }),
      );
    for (let pass = 0; pass < 2; pass += 1) {
      await gatingCommandRun(d.g, 'recheck');
      await d.g.gating.service.idle(d.g.guildId);
    }
    await page.reload();
    await tabTo(page, (f) => f.startsWith('a|Held removals'), 200);
    await enterAndWait(page);
    expect(await page.locator('main').innerText()).toContain('6 removals are held.');
    expect(await seriousViolations(page)).toEqual([]);
    await shoot(page, 'dashboard-held');
    await tabTo(page, (f) => f.startsWith('button|Confirm the removals'), 200);
    await enterAndWait(page);
    expect(await page.locator('main').innerText()).toMatch(/Re-check done|The re-check is running/);
    await d.g.gating.service.idle(d.g.guildId);
    await waitFor(() => humans.every((id) => !hasRole(d.g, id, d.g.humanRoleId)), 'the removals');

    // The other pages pass the same check.
    for (const [path, shot] of [
      ['/audit', 'dashboard-audit'],
      ['/exemptions', ''],
      ['/health', 'dashboard-health'],
      ['?days=90', ''],
    ] as const) {
      await page.goto(`${d.publicUrl}/dashboard/${d.g.guildId}${path}`);
      expect(await seriousViolations(page), path).toEqual([]);
      if (shot) await shoot(page, shot);
    }
    expect(problems).toEqual([]);
  });
});
