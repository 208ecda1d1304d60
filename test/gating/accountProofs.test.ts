/**
 * The pure parts of account proofs (issue #36): which subject a signature proves, which proof a bring
 * may use, what a shared proof is linked as, and which links carry a proof; and the render of the
 * member's choices, sharing and /whoami lines (hostile names inert, Discord's limits kept).
 */
import { afterAll, describe, expect, it } from 'vitest';
import {
  accountProofsOf,
  accountSubjectOf,
  proofOfAny,
  sharedIdentityOf,
} from '../../src/gating/proofs/accountProofs.ts';
import { type BringDeps, bringProof } from '../../src/gating/proofs/bringProof.ts';
import { linkCarries } from '../../src/gating/proofs/proofCarrier.ts';
import { proofsField, renderProofChoices, renderSharing } from '../../src/render/accountProofs.ts';
import type { RenderContext } from '../../src/render/types.ts';
import type { AccountProof, LinkRecord, RoleConnectionInput } from '../../src/store/types.ts';
import { assertWithinDiscordLimits } from '../render/limits.ts';
import { sqliteHarness } from '../store/harness.ts';

const EVM = '0x00000000000000000000000000000000000000a1';
const EVM_MIXED_CASE = '0x00000000000000000000000000000000000000A1';
const SOL = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
const proof = (over: Partial<AccountProof> = {}): AccountProof => ({
  subject: EVM,
  userId: 'alice',
  identity: 'alice.eth',
  platform: 'ens',
  address: EVM,
  provenAt: 1,
  ...over,
});
const link = (over: Partial<LinkRecord> = {}): LinkRecord => ({
  guildId: 'g',
  userId: 'alice',
  identity: 'alice.eth',
  platform: 'ens',
  address: EVM,
  proofMethod: 'signature',
  provenAt: 1,
  lastCheckAt: null,
  lastCheckOk: null,
  lastResult: null,
  releasedAt: null,
  ...over,
});
const render: RenderContext = { locale: 'en-US', nowSec: 1_700_000_000, ipfsGateway: 'https://ipfs.io' };

describe('account proofs: subjects and bringing', () => {
  it('a wallet signature proves its lowercase address; Sign in with Farcaster proves the FID', () => {
    expect(accountSubjectOf({}, EVM_MIXED_CASE)).toBe(EVM);
    expect(accountSubjectOf({}, SOL)).toBe(SOL);
    expect(accountSubjectOf({ farcaster: { fid: 3, authMethod: 'custody' } }, EVM)).toBe('farcaster,#3');
  });

  it('a bring uses only a proof of one of the subjects asked for (the wallet the record names now, its FID)', () => {
    const proofs = [proof(), proof({ subject: 'farcaster,#3', identity: 'farcaster,#3' })];
    expect(proofOfAny(proofs, [EVM_MIXED_CASE])?.subject).toBe(EVM);
    expect(proofOfAny(proofs, [null, 'farcaster,#3'])?.subject).toBe('farcaster,#3');
    // Another wallet, a name, nothing: no proof (a new signature is asked for).
    expect(proofOfAny(proofs, ['0x00000000000000000000000000000000000000b2', 'alice.eth', undefined])).toBe(
      undefined,
    );
    expect(proofOfAny([], [EVM])).toBe(undefined);
  });

  it('a shared proof is linked as what the signature proved, never as a name whose record may have moved', () => {
    expect(sharedIdentityOf(proof())).toEqual({ identity: EVM, platform: 'ethereum' });
    expect(sharedIdentityOf(proof({ subject: SOL, address: SOL }))).toEqual({
      identity: SOL,
      platform: 'solana',
    });
    expect(sharedIdentityOf(proof({ subject: 'farcaster,#3' }))).toEqual({
      identity: 'farcaster,#3',
      platform: 'farcaster',
    });
  });

  it('a link carries a proof by its subject, its name, or its signed wallet; a record link to the wallet or a released link does not', () => {
    expect(linkCarries(link(), proof())).toBe(true);
    expect(linkCarries(link({ identity: EVM, platform: 'ethereum' }), proof())).toBe(true);
    expect(linkCarries(link({ identity: 'bob.eth', proofMethod: 'record' }), proof())).toBe(false);
    expect(
      linkCarries(link({ identity: 'other.eth', address: EVM, proofMethod: 'signature' }), proof()),
    ).toBe(true);
    expect(linkCarries(link({ releasedAt: 5 }), proof())).toBe(false);
  });
});

describe('render: the member’s proofs', () => {
  const ids = { use: (s: string) => `verify|use|${s}`, prove: 'verify|prove' };

  it('lists each proof as "Use X here" and a button to prove another; none: how to prove one', () => {
    const listed = renderProofChoices([proof()], ids, render);
    assertWithinDiscordLimits(listed);
    const json = JSON.stringify(listed.components);
    expect(json).toContain('Use alice.eth here');
    expect(json).toContain(`verify|use|${EVM}`);
    expect(json).toContain('verify|prove');
    const none = renderProofChoices([], ids, render);
    expect(none.embeds[0]?.title).toBe('No proof by signature yet');
    expect(JSON.stringify(none.components)).not.toContain('verify|use');
  });

  it('keeps to Discord’s limits with more proofs than buttons fit, and hostile names inert', () => {
    const many = Array.from({ length: 40 }, (_, i) =>
      proof({
        subject: `0x${String(i).padStart(40, '0')}`,
        identity: `@everyone **${'x'.repeat(200)}${i}**`,
      }),
    );
    const listed = renderProofChoices(many, ids, render);
    assertWithinDiscordLimits(listed);
    expect(listed.components?.length).toBeLessThanOrEqual(5);
    expect(listed.allowed_mentions).toEqual({ parse: [] });
    const field = proofsField(
      [{ identity: 'alice.eth', servers: ['[phish](https://evil.example) @here'] }],
      false,
      render,
    );
    expect(field.value).not.toContain('[phish](https://evil.example)');
  });

  it('sharing on names how many servers were added; off says the servers that have them keep them', () => {
    expect(JSON.stringify(renderSharing(true, 2, render).embeds)).toContain('2 servers added now');
    expect(JSON.stringify(renderSharing(true, 1, render).embeds)).toContain('1 server added now');
    // Servers another process serves follow at its next pick-up (sharingPickUp.ts).
    expect(JSON.stringify(renderSharing(true, 1, render).embeds)).toContain('any others within a minute');
    expect(JSON.stringify(renderSharing(false, 0, render).embeds)).toContain(
      'keep them until you remove them',
    );
  });
});

describe('the Linked Roles page’s proof is the account’s too (SQLite store)', () => {
  const h = sqliteHarness();
  afterAll(() => h.cleanup());
  const connection = (over: Partial<RoleConnectionInput> = {}): RoleConnectionInput => ({
    userId: 'alice',
    identity: 'alice.eth',
    platform: 'ens',
    address: EVM,
    proofMethod: 'signature',
    provenAt: 5,
    sealedAccessToken: null,
    sealedRefreshToken: null,
    accessExpiresAt: 0,
    metadata: null,
    writtenAt: null,
    staleSince: null,
    ...over,
  });

  it('a signature there counts as an account proof; a record proof, a released one, or a wallet another account proved does not', async () => {
    await h.fresh();
    const store = await h.open({ now: () => 10 });
    await store.proveRoleConnection(connection(), { reason: 'test' });
    expect((await accountProofsOf(store, 'alice')).map((p) => [p.subject, p.identity])).toEqual([
      [EVM, 'alice.eth'],
    ]);

    // Bob's own signature in a server took the wallet: it is his account's, not hers.
    await store.saveAccountProof(proof({ userId: 'bob', provenAt: 9 }));
    expect(await accountProofsOf(store, 'alice')).toEqual([]);
    await store.removeAccountProofs('bob');

    await store.releaseRoleConnection('alice', 'the record no longer names her', 11);
    expect(await accountProofsOf(store, 'alice')).toEqual([]);

    await store.proveRoleConnection(connection({ proofMethod: 'record', provenAt: 12 }), { reason: 'test' });
    expect(await accountProofsOf(store, 'alice')).toEqual([]);
  });
});

describe('bringProof: a wallet another account took while it was being brought', () => {
  const deps = (holder: string, dropped: string[][]): BringDeps => ({
    store: { getAccountProof: async () => proof({ userId: holder }) },
    links: {
      capRefusal: async () => null,
      save: async (input: LinkRecord) => ({ link: { ...link(), ...input }, moved: false }),
    } as unknown as BringDeps['links'],
    worker: { blockedRoles: () => [] },
    now: () => 7,
    syncAfterLink: async () => ({ applied: { add: [], remove: [] } }),
    unverify: async (_g, _u, names) => {
      dropped.push(names);
      return names.length;
    },
  });
  const bring = {
    guildId: 'g',
    userId: 'alice',
    target: { identity: EVM, platform: 'ethereum' },
    proof: proof(),
  };

  it('the link made goes again and the member is told it raced; the honest bring stays', async () => {
    const dropped: string[][] = [];
    expect(await bringProof(deps('bob', dropped), bring)).toEqual({
      kind: 'refused',
      refusal: { code: 'raced', subject: EVM },
    });
    expect(dropped).toEqual([[EVM]]);

    const kept: string[][] = [];
    const result = await bringProof(deps('alice', kept), bring);
    expect(result).toMatchObject({
      kind: 'linked',
      brought: true,
      link: { identity: EVM, proofMethod: 'signature' },
    });
    expect(kept).toEqual([]);
  });

  it('a Farcaster account is linked as its FID, whatever name brought it', async () => {
    const fid = proof({ subject: 'farcaster,#77', identity: 'farcaster,#77' });
    const result = await bringProof(deps('alice', []), {
      ...bring,
      target: { identity: 'alice.farcaster', platform: 'farcaster' },
      proof: fid,
    });
    expect(result).toMatchObject({
      kind: 'linked',
      link: { identity: 'farcaster,#77', platform: 'farcaster' },
    });
  });
});
