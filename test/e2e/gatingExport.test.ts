/**
 * `/gating export` end to end: an admin gets three CSV files (members, gated roles, audit events) with a
 * hostile identity neutralised; a member without Manage Server is refused with nothing attached; `days`
 * narrows the audit file.
 */
import { gunzipSync } from 'node:zlib';
import { ApplicationCommandOptionType, PermissionFlagsBits } from 'discord-api-types/v10';
import { afterEach, describe, expect, it } from 'vitest';
import type { FakeMessage } from '../../fakes/discord/server.ts';
import {
  addIdentity,
  addMember,
  closeGating,
  type GatingHarness,
  gatingCommandRun,
  option,
  setup,
  startGating,
  verifyByRecord,
} from './gatingHarness.ts';
import { ALICE, isEphemeral, visibleMessage } from './harness.ts';

afterEach(closeGating);

const DAY = 86_400_000;
const HOSTILE = '=HYPERLINK("http://evil.example","x"),\n@SUM(1)';

function filesOf(g: GatingHarness, message: FakeMessage): Map<string, string> {
  const out = new Map<string, string>();
  for (const a of message.attachments) {
    const stored = g.h.discord.state.files.get(a.id);
    if (!stored) throw new Error(`no bytes for ${a.filename}`);
    const bytes = a.filename.endsWith('.gz') ? gunzipSync(stored.data) : Buffer.from(stored.data);
    out.set(a.filename.replace(/\.gz$/, ''), bytes.toString('utf8'));
  }
  return out;
}

describe('/gating export', () => {
  it('an admin gets members, gated roles and audit events; hostile text is inert; days narrows', async () => {
    const g = await startGating();
    await setup(g);
    addIdentity(g, 'alice.eth', { discordHandle: 'alice', human: true });
    await verifyByRecord(g);
    const store = g.gating.store;
    await store.saveLink(
      {
        guildId: g.guildId,
        userId: '300000000000000009',
        identity: HOSTILE,
        platform: 'ens',
        address: null,
        proofMethod: 'record',
        provenAt: Date.now(),
      },
      'test',
    );
    await store.addAuditEvent({
      guildId: g.guildId,
      kind: 'linked',
      reason: 'long ago',
      createdAt: Date.now() - 10 * DAY,
    });

    const reply = visibleMessage(await gatingCommandRun(g, 'export'));
    expect(isEphemeral(reply)).toBe(true);
    const files = filesOf(g, reply);
    expect([...files.keys()].sort()).toEqual(['audit-30d.csv', 'members.csv', 'roles.csv']);
    const members = files.get('members.csv') ?? '';
    expect(members.startsWith('\uFEFFmember_id,username,identity,platform,proof_method')).toBe(true);
    expect(members).toContain(`${ALICE},`);
    expect(members).toContain('alice.eth,ens,record,');
    expect(members).toContain(`"'=HYPERLINK(""http://evil.example"",""x""),\n@SUM(1)"`);
    expect(files.get('roles.csv')).toContain(`${ALICE},${g.humanRoleId},Verified Human,`);
    expect(files.get('audit-30d.csv')).toContain('long ago');

    const narrow = filesOf(
      g,
      visibleMessage(
        await gatingCommandRun(g, 'export', [option(ApplicationCommandOptionType.Integer, 'days', 1)]),
      ),
    );
    expect(narrow.get('audit-1d.csv')).not.toContain('long ago');
    expect(narrow.get('audit-1d.csv')).toContain('role_added');
  });

  it('a member without Manage Server is refused privately, nothing attached', async () => {
    const g = await startGating();
    await setup(g);
    const mod = await addMember(g, 'mod', { permissions: PermissionFlagsBits.ManageRoles });
    const reply = visibleMessage(await gatingCommandRun(g, 'export', [], mod));
    expect(isEphemeral(reply)).toBe(true);
    expect(reply.content).toContain('Manage Server');
    expect(reply.attachments).toEqual([]);
  });
});
