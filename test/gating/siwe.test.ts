import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ParsedMessage } from '@spruceid/siwe-parser';
import { getAddress } from 'viem';
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts';
import { parseSiweMessage, validateSiweMessage } from 'viem/siwe';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildSiweMessage, type SiweConfig } from '../../src/gating/proofs/challengeMessage.ts';
import {
  createChallenge,
  MAX_OPEN_CHALLENGES_PER_USER,
  type NonceRecord,
  verifyChallenge,
} from '../../src/gating/proofs/siwe.ts';
import { openSqliteStore } from '../../src/store/sqliteStore.ts';
import type { GatingStore } from '../../src/store/types.ts';

const GUILD = '111111111111111111';
const USER = '222222222222222222';
const T0 = Date.UTC(2025, 5, 1, 12, 0, 0);

let store: GatingStore;
let clock: number;
let cfg: SiweConfig;
const signer = privateKeyToAccount(generatePrivateKey());
const stranger = privateKeyToAccount(generatePrivateKey());

beforeEach(async () => {
  store = await openSqliteStore(':memory:');
  clock = T0;
  cfg = { publicUrl: 'https://bot.example.org/', now: () => clock };
});
afterEach(async () => {
  await store.close();
});

async function challengeAndMessage(identity = 'vitalik.eth') {
  const challenge = await createChallenge(store, cfg, {
    guildId: GUILD,
    userId: USER,
    userName: 'alice',
    guildName: 'Web3 Lounge',
    identity,
    address: signer.address,
  });
  const record = await store.getNonce(challenge.nonce);
  if (!record) throw new Error('challenge was not stored');
  return { challenge, record, message: buildSiweMessage(cfg, record) };
}

describe('createChallenge', () => {
  it('stores a 128-bit nonce bound to user, guild, identity and lowercase address, expiring in 10 minutes', async () => {
    const { challenge, record } = await challengeAndMessage();
    expect(challenge.nonce).toMatch(/^[0-9a-f]{32}$/);
    expect(challenge.url).toBe(`https://bot.example.org/verify/${challenge.nonce}`);
    expect(challenge.expiresAt).toBe(T0 + 10 * 60_000);
    expect(record).toEqual({
      nonce: challenge.nonce,
      guildId: GUILD,
      userId: USER,
      userName: 'alice',
      guildName: 'Web3 Lounge',
      identity: 'vitalik.eth',
      address: signer.address.toLowerCase(),
      expiresAt: T0 + 10 * 60_000,
      usedAt: null,
      failedAttempts: 0,
    });
    const other = await createChallenge(store, cfg, {
      guildId: GUILD,
      userId: USER,
      userName: null,
      guildName: null,
      identity: 'vitalik.eth',
      address: signer.address,
    });
    expect(other.nonce).not.toBe(challenge.nonce);
  });

  it('refuses input that is not a snowflake or an address', async () => {
    const base = {
      guildId: GUILD,
      userId: USER,
      userName: 'alice',
      guildName: 'Web3 Lounge',
      identity: 'a.eth',
      address: signer.address,
    };
    await expect(createChallenge(store, cfg, { ...base, userId: 'abc' })).rejects.toThrow(TypeError);
    await expect(createChallenge(store, cfg, { ...base, address: '0x1234' })).rejects.toThrow(TypeError);
    await expect(createChallenge(store, cfg, { ...base, identity: ' \u202e ' })).rejects.toThrow(TypeError);
    await expect(createChallenge(store, cfg, { ...base, identity: 'a.eth\nURI: x' })).rejects.toThrow(
      TypeError,
    );
    await expect(createChallenge(store, cfg, { ...base, identity: 'a.eth\u0000' })).rejects.toThrow(
      TypeError,
    );
  });

  it('caps an account at 5 open challenges: the 6th replaces the first, across servers and Linked Roles', async () => {
    expect(MAX_OPEN_CHALLENGES_PER_USER).toBe(5);
    const make = (guildId: string, userId = USER) =>
      createChallenge(store, cfg, {
        guildId,
        userId,
        userName: 'alice',
        guildName: null,
        identity: 'vitalik.eth',
        address: signer.address,
      });
    const nonces: string[] = [];
    // One a second: the same TTL, so the order of creation is the order of expiry.
    for (const guildId of [GUILD, '333333333333333333', '0', GUILD, '444444444444444444', GUILD]) {
      nonces.push((await make(guildId)).nonce);
      clock += 1_000;
    }
    expect(await store.getNonce(nonces[0] ?? '')).toBeUndefined();
    for (const nonce of nonces.slice(1)) expect((await store.getNonce(nonce))?.usedAt).toBeNull();

    // Another account is not touched, nor does it count; a used challenge no longer counts either.
    const otherAccount = await make(GUILD, '555555555555555555');
    expect(await store.consumeNonce(nonces[1] ?? '', clock)).toBeDefined();
    nonces.push((await make(GUILD)).nonce);
    for (const nonce of nonces.slice(1)) expect(await store.getNonce(nonce)).toBeDefined();
    expect(await store.getNonce(otherAccount.nonce)).toBeDefined();
    nonces.push((await make(GUILD)).nonce);
    expect(await store.getNonce(nonces[2] ?? '')).toBeUndefined();
    expect((await store.getNonce(nonces[1] ?? ''))?.usedAt).not.toBeNull();
  });
});

describe('buildSiweMessage', () => {
  it('keeps hostile names on one bounded line, without quotes or bidi overrides that change its meaning', () => {
    const statement = buildSiweMessage(cfg, {
      nonce: 'a'.repeat(32),
      guildId: GUILD,
      userId: USER,
      userName: 'eve\nURI: https://evil.example\u202e',
      guildName: `"Trusted" ${'x'.repeat(300)}`,
      identity: 'vitalik.eth',
      address: signer.address.toLowerCase(),
      expiresAt: T0 + 60_000,
      usedAt: null,
      failedAttempts: 0,
    });
    const parsed = parseSiweMessage(statement);
    expect(parsed.uri).toBe('https://bot.example.org');
    expect(parsed.statement).toContain(`@eve URI: https://evil.example (id ${USER}) in the server`);
    expect(parsed.statement).not.toMatch(/[\u202e\n"]/);
    expect(parsed.statement).toContain(`''Trusted' ${'x'.repeat(20)}`);
    expect(parsed.statement).toContain(`x...' (id ${GUILD})`);
    expect(parsed.statement?.length).toBeLessThan(400);
  });

  it('names the ids for a challenge made before names were kept', () => {
    const statement = buildSiweMessage(cfg, {
      nonce: 'a'.repeat(32),
      guildId: GUILD,
      userId: USER,
      userName: null,
      guildName: null,
      identity: 'vitalik.eth',
      address: signer.address.toLowerCase(),
      expiresAt: T0 + 60_000,
      usedAt: null,
      failedAttempts: 0,
    });
    expect(parseSiweMessage(statement).statement).toContain(
      `account with id ${USER} in the server with id ${GUILD}`,
    );
  });

  it('builds an EIP-4361 message bound to the site, the nonce and the expected signer', async () => {
    const { record, message } = await challengeAndMessage();
    const parsed = parseSiweMessage(message);
    expect(parsed.scheme).toBe('https');
    expect(parsed.domain).toBe('bot.example.org');
    expect(parsed.uri).toBe('https://bot.example.org');
    expect(parsed.address).toBe(signer.address);
    expect(parsed.chainId).toBe(1);
    expect(parsed.nonce).toBe(record.nonce);
    expect(parsed.issuedAt?.getTime()).toBe(T0);
    expect(parsed.expirationTime?.getTime()).toBe(T0 + 10 * 60_000);
    // A person must see whom they link the wallet to: names, not ids.
    expect(parsed.statement).toContain('Discord account @alice');
    expect(parsed.statement).toContain("server 'Web3 Lounge'");
    expect(parsed.statement).not.toContain(USER);
    expect(parsed.statement).not.toContain(GUILD);
    expect(parsed.statement).toContain('vitalik.eth');
    expect(parsed.statement).toContain('not a transaction');
    expect(buildSiweMessage(cfg, record)).toBe(message);
  });

  it('keeps a hostile identity from the store on one statement line', async () => {
    const { record } = await challengeAndMessage();
    const message = buildSiweMessage(cfg, {
      ...record,
      identity: 'evil.eth\nURI: https://attacker.example\u2028x',
    });
    const parsed = parseSiweMessage(message);
    expect(parsed.uri).toBe('https://bot.example.org');
    expect(parsed.statement).toContain('evil.eth?URI: https://attacker.example?x');
    expect(message.split('\n').filter((line) => line.startsWith('URI:'))).toEqual([
      'URI: https://bot.example.org',
    ]);
  });
});

/** What EIP-4361's ABNF allows in a statement: RFC 3986 reserved and unreserved characters, and the space. */
const STATEMENT_GRAMMAR = /^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;= ]+$/;

/**
 * Names a server owner or a member can choose, and what of each the statement must still show: the
 * readable part (`null` when nothing readable is left and the statement names the id instead).
 */
const HOSTILE_NAMES: { name: string; shows: string | null }[] = [
  { name: '"Crypto" Club', shows: "'Crypto' Club" },
  { name: 'C:\\Users\\evil \\" end', shows: "C:?Users?evil ?' end" },
  { name: '100% Degens', shows: '100? Degens' },
  { name: '🚀 Moon Boys 🌕', shows: '? Moon Boys ?' },
  { name: 'سيرفر العملات', shows: null },
  { name: 'שרת קריפטו Crypto', shows: '? Crypto' },
  { name: '加密货币服务器 Web3', shows: '? Web3' },
  { name: 'Safe\u202eyrt\u202c Club', shows: 'Safeyrt Club' },
  { name: 'ali\u200dce\u200b', shows: 'alice' },
  {
    name: 'eve\nURI: https://evil.example\nNonce: 00000000',
    shows: 'eve URI: https://evil.example Nonce: 00000000',
  },
  { name: '\nURI: https://evil', shows: 'URI: https://evil' },
  { name: '𝓒𝓻𝔂𝓹𝓽𝓸 Ｃｌｕｂ Zoë’s Café', shows: "Crypto Club Zoe's Cafe" },
  { name: 'x'.repeat(100), shows: 'x'.repeat(100) },
  { name: `${'服'.repeat(50)}${'y'.repeat(50)}`, shows: `?${'y'.repeat(50)}` },
  { name: Array.from('Ab🚀'.repeat(34)).slice(0, 100).join(''), shows: `${'Ab?'.repeat(33)}A` },
  { name: '⒇'.repeat(100), shows: `${'(20)'.repeat(24)}(...` },
  { name: '服务器', shows: null },
  { name: '👨‍👩‍👧‍👦', shows: null },
  { name: '{<|>}^`', shows: null },
];

function recordNaming(
  userName: string | null,
  guildName: string | null,
  identity = 'vitalik.eth',
): NonceRecord {
  return {
    nonce: 'b'.repeat(32),
    guildId: GUILD,
    userId: USER,
    userName,
    guildName,
    identity,
    address: signer.address.toLowerCase(),
    expiresAt: T0 + 10 * 60_000,
    usedAt: null,
    failedAttempts: 0,
  };
}

/** The statement, after checking that Spruce's reference parser and viem both accept the message. */
function conformingStatement(message: string, record: NonceRecord): string {
  const reference = new ParsedMessage(message);
  expect(reference.domain).toBe('bot.example.org');
  expect(reference.uri).toBe('https://bot.example.org');
  expect(reference.address).toBe(getAddress(record.address));
  expect(reference.nonce).toBe(record.nonce);
  expect(reference.chainId).toBe(1);
  const parsed = parseSiweMessage(message);
  expect(
    validateSiweMessage({
      message: parsed,
      domain: 'bot.example.org',
      address: getAddress(record.address),
      nonce: record.nonce,
      time: new Date(T0 + 60_000),
    }),
  ).toBe(true);
  expect(parsed.statement).toBe(reference.statement);
  const statement = reference.statement ?? '';
  expect(statement).toMatch(STATEMENT_GRAMMAR);
  expect(statement.length).toBeLessThan(500);
  expect(message.split('\n').filter((line) => /^(URI|Nonce|Version|Chain ID):/.test(line))).toHaveLength(4);
  return statement;
}

describe('buildSiweMessage with names the EIP-4361 grammar cannot carry', () => {
  it('is accepted by the reference parser for a plain name, written as it is, with no id', () => {
    const record = recordNaming('alice', 'Web3 Lounge');
    const statement = conformingStatement(buildSiweMessage(cfg, record), record);
    expect(statement).toBe(
      "Link the Discord account @alice in the server 'Web3 Lounge' to the web3 identity vitalik.eth. This is a signature, not a transaction: it costs nothing and moves no funds.",
    );
  });

  it.each(HOSTILE_NAMES)('server name $name: conforming, showing what is readable', ({ name, shows }) => {
    const record = recordNaming('alice', name);
    const statement = conformingStatement(buildSiweMessage(cfg, record), record);
    const exact = shows === name;
    const server = shows === null ? `with id ${GUILD}` : `'${shows}'${exact ? '' : ` (id ${GUILD})`}`;
    expect(statement).toContain(
      `Discord account @alice in the server ${server} to the web3 identity vitalik.eth.`,
    );
  });

  it.each(HOSTILE_NAMES)('username $name: conforming, showing what is readable', ({ name, shows }) => {
    const record = recordNaming(name, 'Web3 Lounge');
    const statement = conformingStatement(buildSiweMessage(cfg, record), record);
    const exact = shows === name;
    const account = shows === null ? `with id ${USER}` : `@${shows}${exact ? '' : ` (id ${USER})`}`;
    expect(statement).toContain(`Link the Discord account ${account} in the server 'Web3 Lounge' to`);
  });

  it('is accepted with hostile names everywhere at once, and a member of such a server signs it', async () => {
    for (const [i, { name }] of HOSTILE_NAMES.entries()) {
      const other = HOSTILE_NAMES[HOSTILE_NAMES.length - 1 - i]?.name ?? null;
      const record = recordNaming(name, other, i % 2 === 0 ? '🦊.eth' : 'ünï.eth');
      const statement = conformingStatement(buildSiweMessage(cfg, record), record);
      expect(statement).toContain(i % 2 === 0 ? 'identity ?.eth.' : 'identity ?n?.eth.');
    }
    const challenge = await createChallenge(store, cfg, {
      guildId: GUILD,
      userId: USER,
      userName: '猫🐱 neko',
      guildName: '"Crypto" 🚀 سيرفر 服务器',
      identity: 'vitalik.eth',
      address: signer.address,
    });
    const hostile = await store.getNonce(challenge.nonce);
    if (!hostile) throw new Error('challenge was not stored');
    const message = buildSiweMessage(cfg, hostile);
    expect(conformingStatement(message, hostile)).toContain(
      `account @? neko (id ${USER}) in the server ''Crypto' ?' (id ${GUILD})`,
    );
    const outcome = await verifyChallenge(store, cfg, {
      nonce: hostile.nonce,
      message,
      signature: await signer.signMessage({ message }),
    });
    expect(outcome.ok).toBe(true);
  });

  it('builds the same text for the same record, so verification rebuilds what was signed', () => {
    for (const { name } of HOSTILE_NAMES) {
      const record = recordNaming(name, name, name);
      expect(buildSiweMessage(cfg, { ...record })).toBe(buildSiweMessage(cfg, record));
    }
  });
});

describe('verifyChallenge', () => {
  it('accepts the signed message once, then refuses the replay as used', async () => {
    const { record, message } = await challengeAndMessage();
    const signature = await signer.signMessage({ message });
    clock = T0 + 60_000;
    const outcome = await verifyChallenge(store, cfg, { nonce: record.nonce, message, signature });
    expect(outcome).toEqual({
      ok: true,
      record: { ...record, usedAt: T0 + 60_000 },
      address: signer.address,
    });
    expect((await store.getNonce(record.nonce))?.usedAt).toBe(T0 + 60_000);

    const replay = await verifyChallenge(store, cfg, { nonce: record.nonce, message, signature });
    expect(replay).toMatchObject({ ok: false, reason: 'used' });
  });

  it('verifies a challenge for an emoji identity, written with ? where the statement has no character', async () => {
    const { record, message } = await challengeAndMessage('👨‍👩‍👧 ünï\u202e.eth');
    expect(parseSiweMessage(message).statement).toContain('identity ?n?.eth.');
    const outcome = await verifyChallenge(store, cfg, {
      nonce: record.nonce,
      message,
      signature: await signer.signMessage({ message }),
    });
    expect(outcome.ok).toBe(true);
  });

  it('checks the message it built itself when the client sends only a signature', async () => {
    const { record, message } = await challengeAndMessage();
    const outcome = await verifyChallenge(store, cfg, {
      nonce: record.nonce,
      signature: await signer.signMessage({ message }),
    });
    expect(outcome.ok).toBe(true);
  });

  it('lets only one of two concurrent submissions win', async () => {
    const { record, message } = await challengeAndMessage();
    const signature = await signer.signMessage({ message });
    const outcomes = await Promise.all([
      verifyChallenge(store, cfg, { nonce: record.nonce, message, signature }),
      verifyChallenge(store, cfg, { nonce: record.nonce, message, signature }),
    ]);
    expect(outcomes.filter((o) => o.ok)).toHaveLength(1);
    expect(outcomes.find((o) => !o.ok)).toMatchObject({ reason: 'used' });
  });

  it('refuses an expired challenge and does not consume it', async () => {
    const { record, message } = await challengeAndMessage();
    const signature = await signer.signMessage({ message });
    clock = T0 + 10 * 60_000;
    const outcome = await verifyChallenge(store, cfg, { nonce: record.nonce, message, signature });
    expect(outcome).toEqual({ ok: false, reason: 'expired' });
    expect((await store.getNonce(record.nonce))?.usedAt).toBeNull();
  });

  it('refuses a tampered message even when it is validly signed, and keeps the nonce usable', async () => {
    const { record, message } = await challengeAndMessage();
    const tampered = message.replace("'Web3 Lounge'", "'Another Server'");
    expect(tampered).not.toBe(message);
    const outcome = await verifyChallenge(store, cfg, {
      nonce: record.nonce,
      message: tampered,
      signature: await signer.signMessage({ message: tampered }),
    });
    expect(outcome).toMatchObject({ ok: false, reason: 'tampered' });

    const honest = await verifyChallenge(store, cfg, {
      nonce: record.nonce,
      message,
      signature: await signer.signMessage({ message }),
    });
    expect(honest.ok).toBe(true);
  });

  it('refuses a message naming another nonce as tampered', async () => {
    const first = await challengeAndMessage();
    const second = await challengeAndMessage();
    const outcome = await verifyChallenge(store, cfg, {
      nonce: first.record.nonce,
      message: second.message,
      signature: await signer.signMessage({ message: second.message }),
    });
    expect(outcome).toMatchObject({ ok: false, reason: 'tampered' });
  });

  it('refuses a message for another domain or URI', async () => {
    const { record, message } = await challengeAndMessage();
    for (const foreign of [
      message.replace('https://bot.example.org wants', 'https://evil.example.org wants'),
      message.replace('URI: https://bot.example.org', 'URI: https://evil.example.org'),
    ]) {
      const outcome = await verifyChallenge(store, cfg, {
        nonce: record.nonce,
        message: foreign,
        signature: await signer.signMessage({ message: foreign }),
      });
      expect(outcome).toMatchObject({ ok: false, reason: 'wrong_domain' });
    }
  });

  it('refuses a message naming another address', async () => {
    const { record, message } = await challengeAndMessage();
    const foreign = message.replace(signer.address, stranger.address);
    const outcome = await verifyChallenge(store, cfg, {
      nonce: record.nonce,
      message: foreign,
      signature: await stranger.signMessage({ message: foreign }),
    });
    expect(outcome).toMatchObject({ ok: false, reason: 'wrong_address' });
  });

  it('refuses the right message signed by another key, naming the signer', async () => {
    const { record, message } = await challengeAndMessage();
    const outcome = await verifyChallenge(store, cfg, {
      nonce: record.nonce,
      message,
      signature: await stranger.signMessage({ message }),
    });
    expect(outcome).toMatchObject({ ok: false, reason: 'wrong_address' });
    if (!outcome.ok) expect(outcome.detail).toMatchObject({ kind: 'signed_by', signer: stranger.address });
    expect((await store.getNonce(record.nonce))?.usedAt).toBeNull();
  });

  it('refuses a signature that recovers to nothing as bad_signature', async () => {
    const { record, message } = await challengeAndMessage();
    const garbage = `0x${'00'.repeat(65)}` as const;
    const outcome = await verifyChallenge(store, cfg, { nonce: record.nonce, message, signature: garbage });
    expect(outcome).toMatchObject({ ok: false, reason: 'bad_signature' });
  });

  it('refuses unknown nonces and malformed input without throwing', async () => {
    const { record, message } = await challengeAndMessage();
    const signature = await signer.signMessage({ message });
    await expect(
      verifyChallenge(store, cfg, { nonce: 'f'.repeat(32), message, signature }),
    ).resolves.toMatchObject({ ok: false, reason: 'unknown_nonce' });
    await expect(
      verifyChallenge(store, cfg, { nonce: '../../etc/passwd', message, signature }),
    ).resolves.toMatchObject({ ok: false, reason: 'unknown_nonce' });
    await expect(
      verifyChallenge(store, cfg, { nonce: record.nonce, message, signature: 'nope' as `0x${string}` }),
    ).resolves.toMatchObject({ ok: false, reason: 'malformed' });
    await expect(
      verifyChallenge(store, cfg, { nonce: record.nonce, message: 'hello', signature }),
    ).resolves.toMatchObject({ ok: false, reason: 'malformed' });
    await expect(
      verifyChallenge(store, cfg, { nonce: record.nonce, message: 'x'.repeat(100_000), signature }),
    ).resolves.toMatchObject({ ok: false, reason: 'malformed' });
  });
});

describe('verifyChallenge with a contract wallet (ERC-1271 through RPC_URL)', () => {
  let rpc: Server;
  let rpcAnswer: 'valid' | 'invalid' | 'down';
  let ethCalls: number;

  beforeEach(async () => {
    ethCalls = 0;
    rpc = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      req.on('end', () => {
        const request = JSON.parse(body) as { id: number; method: string };
        if (rpcAnswer === 'down') {
          res.writeHead(503).end();
          return;
        }
        if (request.method === 'eth_call') ethCalls += 1;
        // The ERC-6492 universal validator returns an ABI-encoded bool.
        const result = `0x${(rpcAnswer === 'valid' ? '1' : '0').padStart(64, '0')}`;
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ jsonrpc: '2.0', id: request.id, result }));
      });
    });
    await new Promise<void>((resolve) => rpc.listen(0, '127.0.0.1', resolve));
    cfg.rpcUrl = `http://127.0.0.1:${(rpc.address() as AddressInfo).port}`;
  });
  afterEach(async () => {
    await new Promise((resolve) => rpc.close(resolve));
  });

  it('accepts a signature the wallet contract approves', async () => {
    rpcAnswer = 'valid';
    const { record, message } = await challengeAndMessage();
    const contractSignature = `0x${'ab'.repeat(100)}` as const;
    const outcome = await verifyChallenge(store, cfg, {
      nonce: record.nonce,
      message,
      signature: contractSignature,
    });
    expect(outcome.ok).toBe(true);
    expect(ethCalls).toBe(1);
  });

  it('refuses a signature the wallet contract rejects, and reports an unreachable node', async () => {
    rpcAnswer = 'invalid';
    const { record, message } = await challengeAndMessage();
    const contractSignature = `0x${'ab'.repeat(100)}` as const;
    const rejected = await verifyChallenge(store, cfg, {
      nonce: record.nonce,
      message,
      signature: contractSignature,
    });
    expect(rejected).toMatchObject({ ok: false, reason: 'bad_signature' });

    rpcAnswer = 'down';
    const unavailable = await verifyChallenge(store, cfg, {
      nonce: record.nonce,
      message,
      signature: contractSignature,
    });
    expect(unavailable).toMatchObject({ ok: false, reason: 'bad_signature' });
    if (!unavailable.ok) expect(unavailable.detail).toEqual({ kind: 'chain_unavailable' });
    expect((await store.getNonce(record.nonce))?.usedAt).toBeNull();
  });

  it('still accepts a plain-account signature without asking the node', async () => {
    rpcAnswer = 'invalid';
    const { record, message } = await challengeAndMessage();
    const outcome = await verifyChallenge(store, cfg, {
      nonce: record.nonce,
      message,
      signature: await signer.signMessage({ message }),
    });
    expect(outcome.ok).toBe(true);
    expect(ethCalls).toBe(0);
  });
});
