import { describe, expect, it } from 'vitest';
import { findIdentitiesInText, MAX_IDENTITIES_IN_TEXT } from '../../src/web3bio/identitiesInText.ts';

const VITALIK = '0xd8da6bf26964af9d7eed9e03e53415d37aa96045';
const SOLANA = 'GZs4kWxJtU8mTqHbKSi1WspvLUGd2ZAJy7gPVN1hYhYV';
const identities = (text: string) => findIdentitiesInText(text).map((found) => found.identity);

describe('findIdentitiesInText', () => {
  it('finds every written form, normalised, with its batch id', () => {
    const text = [
      'ask vitalik.eth or jesse.base.eth, maybe name.linea.eth.',
      `send to ${VITALIK.toUpperCase().replace('0X', '0x')} or ${SOLANA}`,
      'farcaster: @dwr and v.farcaster; lens: lens/stani and aave.lens',
    ].join('\n');
    expect(findIdentitiesInText(text)).toEqual([
      { identity: 'vitalik.eth', kind: 'ens', batchId: 'ens,vitalik.eth' },
      { identity: 'jesse.base.eth', kind: 'basenames', batchId: 'basenames,jesse.base.eth' },
      { identity: 'name.linea.eth', kind: 'linea', batchId: 'linea,name.linea.eth' },
      { identity: VITALIK, kind: 'evm-address', batchId: `ethereum,${VITALIK}` },
      { identity: SOLANA, kind: 'solana-address', batchId: null },
      { identity: 'dwr.farcaster', kind: 'farcaster', batchId: 'farcaster,dwr' },
      { identity: 'v.farcaster', kind: 'farcaster', batchId: 'farcaster,v' },
      { identity: 'stani.lens', kind: 'lens', batchId: 'lens,stani.lens' },
      { identity: 'aave.lens', kind: 'lens', batchId: 'lens,aave.lens' },
    ]);
  });

  it('reads names out of markdown, brackets, quotes and URLs', () => {
    expect(
      identities(
        `**vitalik.eth** _dwr.eth_ (nick.eth) "brantly.eth" \`luc.eth\` https://etherscan.io/address/${VITALIK}`,
      ),
    ).toEqual(['vitalik.eth', 'dwr.eth', 'nick.eth', 'brantly.eth', 'luc.eth', VITALIK]);
  });

  it('ignores plain words, web hosts, other name services and near-addresses', () => {
    expect(
      identities(
        'hello world example.com docs.google.com bonfida.sol sandy.nft farcaster,#3 0x1234 0xd8da6bf26964af9d7eed9e03e53415d37aa9604 v1.2.3 e.g. ...eth',
      ),
    ).toEqual([]);
  });

  it('takes no Discord markup or mass mention for a handle', () => {
    expect(
      identities('<@123456789012345678> <@!1> <@&42> <#99> </whois:1> <:eth:12> <t:1:R> @everyone @here'),
    ).toEqual([]);
  });

  it('drops duplicates case-insensitively for names and EVM addresses, keeping the first place', () => {
    expect(
      identities(
        `Vitalik.ETH ${VITALIK} vitalik.eth ${VITALIK.toUpperCase().replace('0X', '0x')} @dwr DWR.farcaster`,
      ),
    ).toEqual(['vitalik.eth', VITALIK, 'dwr.farcaster']);
  });

  it(`stops at ${MAX_IDENTITIES_IN_TEXT}`, () => {
    const text = Array.from({ length: 30 }, (_, i) => `name${i}.eth`).join(' ');
    const found = identities(text);
    expect(found).toHaveLength(MAX_IDENTITIES_IN_TEXT);
    expect(found[0]).toBe('name0.eth');
    expect(found.at(-1)).toBe('name9.eth');
  });

  it('stays quick and finds nothing in hostile text', () => {
    const hostile = `${'**@everyone** <@1> [x](javascript:alert(1)) \u202Egnp.exe\u202C \u0000 '.repeat(40)}${'a'.repeat(4_000)}`;
    const started = performance.now();
    expect(identities(hostile)).toEqual([]);
    expect(performance.now() - started).toBeLessThan(500);
  });

  it('keeps the identity that follows hostile text intact', () => {
    expect(identities('@everyone\u202E look: ‮vitalik.eth')).toEqual([]);
    expect(identities('<@1>vitalik.eth')).toEqual(['vitalik.eth']);
  });
});
