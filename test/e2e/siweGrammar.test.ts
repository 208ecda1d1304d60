/**
 * A signed message every wallet can read (issue #15, point 6), end to end: the real bot and its verify
 * server against the stand-in Discord and Web3.bio. A server renamed to something EIP-4361's statement
 * grammar cannot carry (quotes, emoji, Arabic, CJK, a bidi override, a line break, 100 characters), and
 * a member with an emoji and CJK username, run `/verify` of a wallet. The wallet here reads the message
 * as a strict one does before offering a sign-in request: with Spruce's reference parser and viem's,
 * bound to the site's domain, the address and the nonce. It signs only a message that passes; the
 * bot must accept that signature and link the identity.
 */
import { ed25519 } from '@noble/curves/ed25519';
import { ParsedMessage } from '@spruceid/siwe-parser';
import { getAddress } from 'viem';
import { generatePrivateKey, type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts';
import { parseSiweMessage, validateSiweMessage } from 'viem/siwe';
import { afterEach, describe, expect, it } from 'vitest';
import type { FakeMessage } from '../../fakes/discord/server.ts';
import { gatingCredentials } from '../../fakes/web3bio/builders.ts';
import { solanaKey } from '../gating/testWallets.ts';
import {
  addMember,
  closeGating,
  type GatingHarness,
  hasRole,
  PUBLIC_URL,
  seen,
  setup,
  signFromReply,
  startGating,
  waitFor,
} from './gatingHarness.ts';
import { visibleMessage } from './harness.ts';

afterEach(closeGating);

/** What EIP-4361's ABNF allows in a statement: RFC 3986 reserved and unreserved characters, and the space. */
const STATEMENT_GRAMMAR = /^[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;= ]+$/;
const DOMAIN = new URL(PUBLIC_URL).host;

const CRYPTO_SERVER = '"Crypto" 🚀 سيرفر 服务器';
/** 100 characters, Discord's longest server name: a bidi override, a line break and a forged field. */
const LONG_SERVER = Array.from(
  `Ünïcödé \u202eyrt\u202c 🚀🚀 服务器 "Club"\nURI: https://evil.example ${'Ω'.repeat(100)}`,
)
  .slice(0, 100)
  .join('');
const EMOJI_USERNAME = '猫🐱 neko';

/** Renames the harness guild (GUILD_UPDATE, as when its owner renames it) once the bot has seen it. */
async function renameGuild(g: GatingHarness, name: string): Promise<void> {
  g.h.discord.renameGuild(g.guildId, name);
  await waitFor(() => g.h.bot.client.guilds.cache.get(g.guildId)?.name === name, 'the new server name');
}

/** The signing link of a `/verify` reply, and its nonce. */
function nonceOf(reply: FakeMessage): string {
  const button = (reply.components?.[0] as { components: { url?: string }[] } | undefined)?.components[0];
  const nonce = button?.url?.match(/\/verify\/([0-9a-f]{32})$/)?.[1];
  if (!nonce) throw new Error(`no signing link in the reply: ${seen(reply)}`);
  return nonce;
}

/**
 * A wallet that offers a sign-in request only for a message both parsers accept for this site, its
 * account and the expected nonce; it keeps the statement it showed. Anything else it refuses to sign.
 */
function strictWallet(account: PrivateKeyAccount, nonce: () => string) {
  const shown: string[] = [];
  return {
    shown,
    async signMessage({ message }: { message: string }): Promise<`0x${string}`> {
      const reference = new ParsedMessage(message);
      expect(reference).toMatchObject({
        domain: DOMAIN,
        address: getAddress(account.address),
        nonce: nonce(),
        uri: PUBLIC_URL,
        chainId: 1,
      });
      const parsed = parseSiweMessage(message);
      expect(parsed.statement).toBe(reference.statement);
      expect(
        validateSiweMessage({ message: parsed, domain: DOMAIN, address: account.address, nonce: nonce() }),
      ).toBe(true);
      shown.push(reference.statement ?? '');
      return account.signMessage({ message });
    },
  };
}

describe('a signed message every wallet can read, whatever the names', () => {
  it.each([
    { server: CRYPTO_SERVER, shows: "''Crypto' ?'" },
    { server: LONG_SERVER, shows: "'Unicode yrt ? 'Club' URI: https://evil.example ?'" },
  ])(
    'server $server: the reference parser and viem accept the message, and its signature links the wallet',
    async ({ server, shows }) => {
      const g = await startGating();
      await setup(g);
      await renameGuild(g, server);
      const member = await addMember(g, EMOJI_USERNAME);
      const account = privateKeyToAccount(generatePrivateKey());
      const address = account.address.toLowerCase();
      g.h.upstream.world.setCredentials(address, gatingCredentials(address, { human: true }));

      const reply = visibleMessage(
        await g.h.run('verify', { identity: account.address }, { userId: member }),
      );
      const nonce = nonceOf(reply);
      const page = await fetch(`${g.gating.verifyUrl}/verify/${nonce}`);
      const html = await page.text();
      // The page keeps the names as they are; only the wallet's statement is limited to the grammar.
      expect(html).toContain('猫🐱 neko');
      expect(html).toContain('🚀');
      expect(html).toContain('服务器');

      const wallet = strictWallet(account, () => nonce);
      const answer = await signFromReply(g, reply, wallet);
      expect(answer).toMatchObject({ status: 200, body: { ok: true } });
      const [statement = ''] = wallet.shown;
      expect(statement).toMatch(STATEMENT_GRAMMAR);
      expect(statement).toContain(`Link the Discord account @? neko (id ${member}) in the server ${shows}`);
      expect(statement).toContain(`(id ${g.guildId}) to the web3 identity ${address}.`);
      expect(statement.length).toBeLessThan(500);

      await g.gating.service.idle(g.guildId);
      expect(await g.gating.store.getUserLinks(g.guildId, member)).toEqual([
        expect.objectContaining({ identity: address, address, proofMethod: 'signature' }),
      ]);
      await waitFor(() => hasRole(g, member, g.humanRoleId), 'the human role for the member');
    },
  );

  it('a member named only in CJK, in such a server, signs in with Solana: the same statement, by ids', async () => {
    const g = await startGating();
    await setup(g);
    await renameGuild(g, CRYPTO_SERVER);
    const member = await addMember(g, '服务器');
    const key = solanaKey();
    g.h.upstream.world.setCredentials(key.address, gatingCredentials(key.address, { human: true }));

    const reply = visibleMessage(await g.h.run('verify', { identity: key.address }, { userId: member }));
    const local = `${g.gating.verifyUrl}/verify/${nonceOf(reply)}`;
    const { message, signIn } = (await (await fetch(`${local}/message`)).json()) as {
      message: string;
      signIn: { statement: string };
    };
    const lines = message.split('\n');
    expect(lines[0]).toBe(`${DOMAIN} wants you to sign in with your Solana account:`);
    expect(lines[3]).toBe(signIn.statement);
    expect(signIn.statement).toMatch(STATEMENT_GRAMMAR);
    expect(signIn.statement).toContain(
      `Link the Discord account with id ${member} in the server ''Crypto' ?' (id ${g.guildId})`,
    );
    expect(lines.filter((line) => line.startsWith('URI: '))).toEqual([`URI: ${PUBLIC_URL}`]);

    const signature = `0x${Buffer.from(ed25519.sign(new TextEncoder().encode(message), key.secret)).toString('hex')}`;
    const sent = await fetch(local, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ signature }),
    });
    expect(sent.status).toBe(200);
    await g.gating.service.idle(g.guildId);
    expect(await g.gating.store.getUserLinks(g.guildId, member)).toEqual([
      expect.objectContaining({ identity: key.address, proofMethod: 'signature', platform: 'solana' }),
    ]);
  });
});
