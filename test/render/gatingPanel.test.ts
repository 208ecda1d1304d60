import { beforeAll, describe, expect, it } from 'vitest';
import { CUSTOM_ID_MAX } from '../../src/discord/customId.ts';
import {
  missingPanelPermissions,
  VERIFY_MODAL_IDS,
  VERIFY_PANEL_IDS,
} from '../../src/discord/verifyPanel.ts';
import { registerCatalog, SHIPPED_LOCALES } from '../../src/i18n/index.ts';
import type { GuildNames } from '../../src/render/gatingLabels.ts';
import { renderPanelPost, renderVerifyModal, renderVerifyPanel } from '../../src/render/gatingPanel.ts';
import { MAX_IDENTITY_LENGTH } from '../../src/web3bio/identity.ts';
import { PSEUDO, pseudoCatalog } from '../i18n/pseudo.ts';
import { ctx, HOSTILE } from './fixtures.ts';
import { assertWithinDiscordLimits, visibleText } from './limits.ts';

const CHANNEL = '1000000000000000010';
const names = (channel: string): GuildNames => ({
  roles: new Map(),
  channels: new Map([[CHANNEL, channel]]),
  users: new Map(),
  usernames: new Map(),
});

beforeAll(() => registerCatalog(PSEUDO, pseudoCatalog()));

const LOCALES = [...SHIPPED_LOCALES, PSEUDO];

describe('the verify panel', () => {
  it.each(LOCALES)(
    'keeps every Discord limit, with two buttons whose ids carry no server-side state (%s)',
    (locale) => {
      const panel = renderVerifyPanel(VERIFY_PANEL_IDS, ctx({ locale }));
      assertWithinDiscordLimits(panel);
      const buttons = panel.components.flatMap((row) => row.components);
      expect(buttons.map((b) => ('custom_id' in b ? b.custom_id : null))).toEqual([
        VERIFY_PANEL_IDS.verify,
        VERIFY_PANEL_IDS.status,
      ]);
      for (const id of [VERIFY_PANEL_IDS.verify, VERIFY_PANEL_IDS.status, VERIFY_MODAL_IDS.modal]) {
        expect(id.length).toBeLessThanOrEqual(CUSTOM_ID_MAX);
        // `~` marks an arg kept in memory (customId.ts): the panel must not need one, it outlives restarts.
        expect(id).not.toContain('~');
      }
    },
  );

  it('names the buttons in the given locale', () => {
    expect(visibleText(renderVerifyPanel(VERIFY_PANEL_IDS, ctx()))).toContain('Verify your identity');
    const de = renderVerifyPanel(VERIFY_PANEL_IDS, ctx({ locale: 'de' }));
    expect(JSON.stringify(de.components)).toContain('Meinen Status prüfen');
  });
});

describe('the Verify modal', () => {
  it.each(LOCALES)(
    'one identity input, labels within 45 characters, as long as /verify allows (%s)',
    (locale) => {
      const modal = renderVerifyModal(VERIFY_MODAL_IDS, MAX_IDENTITY_LENGTH, ctx({ locale }));
      expect(modal.custom_id).toBe(VERIFY_MODAL_IDS.modal);
      expect(modal.title.length).toBeLessThanOrEqual(45);
      expect(modal.components).toHaveLength(1);
      const label = modal.components[0] as unknown as { label: string; component: Record<string, unknown> };
      expect(label.label.length).toBeLessThanOrEqual(45);
      expect(label.component.custom_id).toBe(VERIFY_MODAL_IDS.identity);
      expect(label.component.max_length).toBe(MAX_IDENTITY_LENGTH);
      expect(String(label.component.placeholder).length).toBeLessThanOrEqual(100);
    },
  );
});

describe("the admin's answer", () => {
  it.each(LOCALES)('posted, updated, refused: within limits, the channel named safely (%s)', (locale) => {
    for (const result of [
      { kind: 'posted', channelId: CHANNEL },
      { kind: 'updated', channelId: CHANNEL },
      { kind: 'notPostable', channelId: CHANNEL },
      {
        kind: 'missingPermissions',
        channelId: CHANNEL,
        missing: ['viewChannel', 'sendMessages', 'embedLinks'],
      },
      { kind: 'invokerCannotPost', channelId: CHANNEL, missing: ['viewChannel', 'sendMessages'] },
    ] as const) {
      const payload = renderPanelPost(result, names(HOSTILE), ctx({ locale }));
      assertWithinDiscordLimits(payload);
    }
  });

  it('names each missing permission', () => {
    const text = visibleText(
      renderPanelPost(
        { kind: 'missingPermissions', channelId: CHANNEL, missing: ['sendMessages', 'embedLinks'] },
        names('welcome'),
        ctx(),
      ),
    );
    expect(text).toContain('**#welcome**');
    expect(text).toContain('**Send Messages**, **Embed Links**');
    expect(text).toContain('Nothing was posted');
  });

  it('tells a moderator who could not post in the channel themselves what they lack there', () => {
    const text = visibleText(
      renderPanelPost(
        { kind: 'invokerCannotPost', channelId: CHANNEL, missing: ['sendMessages'] },
        names('welcome'),
        ctx(),
      ),
    );
    expect(text).toContain('You cannot post in **#welcome** yourself');
    expect(text).toContain('**Send Messages**');
    expect(text).not.toContain('I am missing');
    expect(text).toContain('Nothing was posted');
  });

  it('lists what the bot lacks, everything when its permissions are unknown', () => {
    expect(missingPanelPermissions(null)).toEqual(['viewChannel', 'sendMessages', 'embedLinks']);
  });
});
