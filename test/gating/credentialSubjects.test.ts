import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  addressKey,
  credentialSubject,
  type ProofBehind,
  provenSubjects,
  weighCredentials,
} from '../../src/gating/rules/credentialSubjects.ts';
import { RawCredentialSet, toCredentialSet } from '../../src/web3bio/schemas.ts';
import type { Credential, CredentialSet } from '../../src/web3bio/types.ts';

const NOW = 1_780_000_000;
/** The wallet the sample's Galxe and Human Passport entries belong to. */
const HELENA_WALLET = '0xcd133d337ead9c2ac799ec7524a1e0f8aa30c3b1';
const STRANGER = '0x00000000000000000000000000000000000000aa';
const SOLANA = 'HKKp49qGWXd639QsuH7JiLijfVW5UtCVY4s1n2HANwEA';

/** The public sample: Dentity on `ens,0xhelena.eth`, Galxe and Human Passport on the wallet. */
function helena(): CredentialSet {
  const raw = JSON.parse(
    readFileSync(new URL('../fixtures/web3bio/credential-ishuman-0xhelena.json', import.meta.url), 'utf8'),
  );
  return toCredentialSet(RawCredentialSet.parse(raw));
}

function cred(id: string | null, over: Partial<Credential> = {}): Credential {
  return {
    id,
    platform: 'test',
    category: 'isHuman',
    source: 'test-source',
    type: 'boolean',
    value: 'true',
    label: 'Test credential',
    description: '',
    link: null,
    updatedAt: NOW - 100,
    expiredAt: null,
    ...over,
  };
}

function set(
  human: Credential[],
  flags: Partial<Pick<CredentialSet, 'isSpam' | 'isRisky'>> = {},
): CredentialSet {
  return { isHuman: human, isRisky: flags.isRisky ?? [], isSpam: flags.isSpam ?? [] };
}

const record = (identity: string, over: Partial<ProofBehind> = {}): ProofBehind => ({
  identity,
  proofMethod: 'record',
  address: HELENA_WALLET,
  ...over,
});

const labels = (s: CredentialSet) => s.isHuman.map((c) => c.label);

describe('credentialSubject', () => {
  it.each<[string | null, ReturnType<typeof credentialSubject>]>([
    ['ens,0xhelena.eth', { kind: 'identity', value: '0xhelena.eth' }],
    ['ENS,0xHelena.ETH', { kind: 'identity', value: '0xhelena.eth' }],
    [`ethereum,${HELENA_WALLET}`, { kind: 'address', value: HELENA_WALLET }],
    ['ethereum,0xCD133D337EAD9C2AC799EC7524A1E0F8AA30C3B1', { kind: 'address', value: HELENA_WALLET }],
    [`solana,${SOLANA}`, { kind: 'address', value: SOLANA }],
    ['farcaster,ggmonster', { kind: 'identity', value: 'ggmonster.farcaster' }],
    ['farcaster,#3', { kind: 'identity', value: 'farcaster,#3' }],
    ['lens,stani', { kind: 'identity', value: 'stani.lens' }],
    ['basenames,tony.base.eth', { kind: 'identity', value: 'tony.base.eth' }],
    ['0xhelena.eth', { kind: 'identity', value: '0xhelena.eth' }],
    [null, null],
    ['', null],
    ['ens,', null],
    ['twitter,not a name', null],
    [
      'ethereum,0x0000000000000000000000000000000000000000',
      { kind: 'address', value: '0x0000000000000000000000000000000000000000' },
    ],
  ])('%s', (id, subject) => {
    expect(credentialSubject(id)).toEqual(subject);
  });

  it('compares EVM addresses case-insensitively and Solana addresses exactly', () => {
    expect(addressKey('0xCD133D337EAD9C2AC799EC7524A1E0F8AA30C3B1')).toBe(HELENA_WALLET);
    expect(addressKey(SOLANA)).toBe(SOLANA);
    expect(addressKey(SOLANA.toLowerCase())).not.toBe(SOLANA);
  });
});

describe('provenSubjects', () => {
  it('a record proves its name, and the owner and manager of an ENS-style name; not the resolved address', () => {
    const proven = provenSubjects([
      record('Sub.Alice.eth', {
        address: STRANGER,
        ownerAddress: '0xAB00000000000000000000000000000000000001',
      }),
    ]);
    expect([...proven.identities]).toEqual(['sub.alice.eth']);
    expect([...proven.addresses]).toEqual(['0xab00000000000000000000000000000000000001']);
  });

  it('a signature proves its signer; an address identity proves itself', () => {
    const proven = provenSubjects([
      { identity: 'alice.eth', proofMethod: 'signature', address: HELENA_WALLET, ownerAddress: STRANGER },
      { identity: SOLANA, proofMethod: 'signature', address: SOLANA },
    ]);
    expect([...proven.identities]).toEqual(['alice.eth']);
    expect([...proven.addresses].sort()).toEqual([HELENA_WALLET, SOLANA].sort());
  });

  it('an unset owner or manager (the zero address) proves nothing', () => {
    const zero = '0x0000000000000000000000000000000000000000';
    expect([
      ...provenSubjects([record('alice.eth', { ownerAddress: zero, managerAddress: zero })]).addresses,
    ]).toEqual([]);
  });

  it('owners of names without ENS-style records (a Solana name, a Farcaster name) prove nothing', () => {
    const proven = provenSubjects([
      record('bonfida.sol', { address: SOLANA, ownerAddress: SOLANA }),
      record('dwr.farcaster', { ownerAddress: HELENA_WALLET }),
    ]);
    expect([...proven.addresses]).toEqual([]);
  });
});

describe('weighCredentials over the public sample (0xhelena.eth)', () => {
  it('a record proof whose owner is the resolved wallet counts every entry (the honest case)', () => {
    const { counted, uncounted } = weighCredentials({
      credentials: helena(),
      proof: record('0xhelena.eth', { ownerAddress: HELENA_WALLET, managerAddress: null }),
      nowSec: NOW,
    });
    expect(labels(counted)).toEqual([
      'Dentity Humanity Verified',
      'Galxe KYC Verified',
      'Passport Humanity Verified',
    ]);
    expect(uncounted).toEqual([]);
  });

  it('the manager being the resolved wallet counts it too, compared case-insensitively', () => {
    const { counted } = weighCredentials({
      credentials: helena(),
      proof: record('0xhelena.eth', {
        ownerAddress: STRANGER,
        managerAddress: HELENA_WALLET.toUpperCase().replace('0X', '0x'),
      }),
      nowSec: NOW,
    });
    expect(counted.isHuman).toHaveLength(3);
  });

  it('neither owner nor manager: only the name’s own credential counts, the wallet’s are listed with why', () => {
    const { counted, uncounted } = weighCredentials({
      credentials: helena(),
      proof: record('0xhelena.eth', { ownerAddress: STRANGER, managerAddress: STRANGER }),
      nowSec: NOW,
    });
    expect(labels(counted)).toEqual(['Dentity Humanity Verified']);
    expect(uncounted).toEqual([
      {
        category: 'isHuman',
        label: 'Galxe KYC Verified',
        source: 'galxe-passport',
        subject: HELENA_WALLET,
        subjectKind: 'address',
        reason: 'address_not_proven',
        lookedUp: '0xhelena.eth',
        signWith: HELENA_WALLET,
      },
      expect.objectContaining({
        label: 'Passport Humanity Verified',
        subject: HELENA_WALLET,
        reason: 'address_not_proven',
        signWith: HELENA_WALLET,
      }),
    ]);
  });

  it('no owner known (none read, or /domain has none): the wallet’s entries do not count', () => {
    const { counted } = weighCredentials({
      credentials: helena(),
      proof: record('0xhelena.eth'),
      nowSec: NOW,
    });
    expect(labels(counted)).toEqual(['Dentity Humanity Verified']);
  });

  it('a signature by the wallet counts them, with or without the name’s own entries', () => {
    const signed = weighCredentials({
      credentials: helena(),
      proof: { identity: '0xhelena.eth', proofMethod: 'signature', address: HELENA_WALLET },
      nowSec: NOW,
    });
    expect(signed.counted.isHuman).toHaveLength(3);
    expect(signed.uncounted).toEqual([]);
    // The record link stays a record link; a signature in another link of the member counts here.
    const elsewhere = weighCredentials({
      credentials: helena(),
      proof: record('0xhelena.eth', { ownerAddress: STRANGER }),
      others: [{ identity: HELENA_WALLET, proofMethod: 'signature', address: HELENA_WALLET }],
      nowSec: NOW,
    });
    expect(elsewhere.counted.isHuman).toHaveLength(3);
  });

  it('the wallet proven alone: its entries count, the name’s Dentity does not (verify the name for it)', () => {
    const { counted, uncounted } = weighCredentials({
      credentials: helena(),
      proof: { identity: HELENA_WALLET, proofMethod: 'signature', address: HELENA_WALLET },
      nowSec: NOW,
    });
    expect(labels(counted)).toEqual(['Galxe KYC Verified', 'Passport Humanity Verified']);
    expect(uncounted).toEqual([
      expect.objectContaining({
        label: 'Dentity Humanity Verified',
        subject: '0xhelena.eth',
        subjectKind: 'identity',
        reason: 'identity_not_proven',
        signWith: null,
      }),
    ]);
  });

  it('a name proven in another link counts in this answer', () => {
    const { counted } = weighCredentials({
      credentials: helena(),
      proof: { identity: HELENA_WALLET, proofMethod: 'signature', address: HELENA_WALLET },
      others: [record('0xHelena.eth', { ownerAddress: STRANGER })],
      nowSec: NOW,
    });
    expect(counted.isHuman).toHaveLength(3);
  });
});

describe('weighCredentials: flags and edge cases', () => {
  it('flags of every subject stay, the borrowed wallet’s included', () => {
    const spam = cred(`ethereum,${HELENA_WALLET}`, { category: 'isSpam', type: 'score', value: '0' });
    const risky = cred('twitter,not a name', { category: 'isRisky' });
    const credentials = set([], { isSpam: [spam], isRisky: [risky] });
    const { counted, uncounted } = weighCredentials({
      credentials,
      proof: record('sub.attacker.eth', { ownerAddress: STRANGER }),
      nowSec: NOW,
    });
    expect(counted.isSpam).toEqual([spam]);
    expect(counted.isRisky).toEqual([risky]);
    expect(uncounted).toEqual([]);
  });

  it('a null or unreadable id counts only when the address the name resolves to is proven too', () => {
    const credentials = set([
      cred(null, { label: 'No id' }),
      cred('twitter,not a name', { label: 'Odd id' }),
    ]);
    const borrowed = weighCredentials({
      credentials,
      proof: record('sub.attacker.eth', { ownerAddress: STRANGER }),
      nowSec: NOW,
    });
    expect(borrowed.counted.isHuman).toEqual([]);
    expect(borrowed.uncounted).toEqual([
      expect.objectContaining({
        label: 'No id',
        subject: 'sub.attacker.eth',
        subjectKind: 'identity',
        reason: 'unknown_subject',
        signWith: HELENA_WALLET,
      }),
      expect.objectContaining({ label: 'Odd id', reason: 'unknown_subject' }),
    ]);
    const owned = weighCredentials({
      credentials,
      proof: record('alice.eth', { ownerAddress: HELENA_WALLET }),
      nowSec: NOW,
    });
    expect(owned.counted.isHuman).toHaveLength(2);
    const resolvesNowhere = weighCredentials({
      credentials,
      proof: record('alice.eth', { address: null }),
      nowSec: NOW,
    });
    expect(resolvesNowhere.counted.isHuman).toHaveLength(2);
    const signed = weighCredentials({
      credentials,
      proof: { identity: STRANGER, proofMethod: 'signature', address: STRANGER },
      nowSec: NOW,
    });
    expect(signed.counted.isHuman).toHaveLength(2);
  });

  it('Solana: the signer counts exactly, a differently cased address does not', () => {
    const credentials = set([
      cred(`solana,${SOLANA}`),
      cred(`solana,${SOLANA.toLowerCase()}`, { label: 'Other' }),
    ]);
    const { counted, uncounted } = weighCredentials({
      credentials,
      proof: { identity: 'bonfida.sol', proofMethod: 'signature', address: SOLANA },
      nowSec: NOW,
    });
    expect(counted.isHuman).toHaveLength(1);
    expect(uncounted.map((u) => u.label)).toEqual(['Other']);
  });

  it('a record of a Solana name proves no wallet: its address’s credential asks for a signature', () => {
    const { counted, uncounted } = weighCredentials({
      credentials: set([cred(`solana,${SOLANA}`)]),
      proof: { identity: 'bonfida.sol', proofMethod: 'record', address: SOLANA, ownerAddress: SOLANA },
      nowSec: NOW,
    });
    expect(counted.isHuman).toEqual([]);
    expect(uncounted).toEqual([expect.objectContaining({ signWith: SOLANA, reason: 'address_not_proven' })]);
  });

  it('expired entries and false booleans of unproven subjects are dropped without being offered', () => {
    const wallet = `ethereum,${STRANGER}`;
    const credentials = set([
      cred(wallet, { expiredAt: NOW - 1, label: 'Expired' }),
      cred(wallet, { value: 'false', label: 'False' }),
      cred(wallet, { type: 'score', value: '12.5', label: 'Score' }),
      cred('ens,sub.attacker.eth', { expiredAt: NOW - 1, label: 'Own but expired' }),
    ]);
    const { counted, uncounted } = weighCredentials({
      credentials,
      proof: record('sub.attacker.eth', { address: STRANGER }),
      nowSec: NOW,
    });
    // The name's own expired entry is still "counted": the rules ignore it as expired.
    expect(labels(counted)).toEqual(['Own but expired']);
    expect(uncounted.map((u) => u.label)).toEqual(['Score']);
  });
});

describe('a Sign in with Farcaster proof (the FID, signed for by its custody or auth address)', () => {
  const custody = '0x00000000000000000000000000000000000000c5';
  const fid: ProofBehind = { identity: 'farcaster,#3', proofMethod: 'signature', address: custody };
  const answer = set([
    cred('farcaster,dwr', { label: 'The account itself' }),
    cred(`ethereum,${custody}`, { label: 'Its custody wallet' }),
    cred(`ethereum,${STRANGER}`, { label: 'Another wallet' }),
    cred('ens,dwr.eth', { label: 'An ENS name' }),
  ]);

  it("counts the account's own entries (filed under its username) and its signer's, not another wallet or name", () => {
    const { counted, uncounted } = weighCredentials({ credentials: answer, proof: fid, nowSec: NOW });
    expect(labels(counted)).toEqual(['The account itself', 'Its custody wallet']);
    expect(uncounted.map((u) => [u.label, u.reason])).toEqual([
      ['Another wallet', 'address_not_proven'],
      ['An ENS name', 'identity_not_proven'],
    ]);
  });

  it('gives a record proof of the same FID no such reading: only what a record proves counts', () => {
    const { counted } = weighCredentials({
      credentials: answer,
      proof: { ...fid, proofMethod: 'record' },
      nowSec: NOW,
    });
    expect(labels(counted)).toEqual([]);
  });

  it("counts a Farcaster entry only in the FID's own answer, not in another proof's", () => {
    const name = record('alice.eth', { address: STRANGER });
    const { counted } = weighCredentials({
      credentials: set([cred('farcaster,dwr', { label: 'Farcaster entry' })]),
      proof: name,
      others: [fid],
      nowSec: NOW,
    });
    expect(labels(counted)).toEqual([]);
  });
});
