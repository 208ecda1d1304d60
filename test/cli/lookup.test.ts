import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeWeb3Bio, startFakeWeb3Bio } from '../../fakes/web3bio/server.ts';
import { EXIT_CODES, formatReadable } from '../../src/cli/lookup.ts';
import { runCli } from './runCli.ts';

const API_KEY = 'cli-test-key-0123456789';

let fake: FakeWeb3Bio;
beforeAll(async () => {
  fake = await startFakeWeb3Bio({ apiKeys: { [API_KEY]: 'full' } });
});
afterAll(() => fake.close());

/** Run the CLI as a user would, in a child process, and return its exit code and output. */
function lookup(args: string[], env: Record<string, string> = {}) {
  return runCli('src/cli/lookup.ts', fake.url, args, env);
}

describe('npm run lookup', () => {
  it('prints a normalised profile as JSON and exits 0', async () => {
    const { code, stdout } = await lookup(['profile', 'Vitalik.ETH', '--platform', 'ens', '--json']);
    expect(code).toBe(EXIT_CODES.ok);
    const profile = JSON.parse(stdout);
    expect(profile).toMatchObject({ identity: 'vitalik.eth', platform: 'ens' });
    expect(fake.requests.at(-1)?.path).toBe('/profile/ens/vitalik.eth');
  });

  it('prints readable text by default', async () => {
    const { code, stdout } = await lookup(['credential', 'spammer.eth']);
    expect(code).toBe(0);
    expect(stdout).toMatch(/isSpam:/);
    expect(stdout).not.toMatch(/null/);
  });

  it('reports batch ids the server dropped as not found', async () => {
    const { code, stdout } = await lookup([
      'batch',
      'ens,vitalik.eth',
      'lens,nobody-here-xyz.lens',
      '--json',
    ]);
    expect(code).toBe(0);
    const entries = JSON.parse(stdout) as { id: string; result: unknown }[];
    expect(entries.map((e) => e.id)).toEqual(['ens,vitalik.eth', 'lens,nobody-here-xyz.lens']);
    expect(entries[1]?.result).toBe('not found');
    expect(entries[0]?.result).toMatchObject({ identity: 'vitalik.eth' });
  });

  it.each([
    { args: ['profile', '../../x'], code: EXIT_CODES.invalidInput, kind: 'invalid_identity' },
    { args: ['nonsense', 'x'], code: EXIT_CODES.invalidInput, kind: 'invalid_input' },
    { args: ['domain', 'nothere-12345.eth'], code: EXIT_CODES.notFound, kind: 'not_found' },
    { args: ['wallet', 'vitalik.eth'], code: EXIT_CODES.auth, kind: 'api_key_required' },
  ])('exits $code with "$kind" on stderr for $args', async ({ args, code, kind }) => {
    const result = await lookup(args);
    expect(result.code).toBe(code);
    expect(result.stderr).toContain(`${kind}:`);
  });

  it('uses the API key for the wallet and never prints it', async () => {
    const ok = await lookup(['wallet', 'vitalik.eth', '--json'], { WEB3BIO_API_KEY: API_KEY });
    expect(ok.code).toBe(0);
    expect(JSON.parse(ok.stdout)).toHaveProperty('identityGraph');
    const bad = await lookup(['profile', 'vitalik.eth'], { WEB3BIO_API_KEY: 'wrong-key-abcdef123' });
    expect(bad.code).toBe(EXIT_CODES.auth);
    expect(`${ok.stdout}${ok.stderr}${bad.stdout}${bad.stderr}`).not.toContain('key-');
  });

  it('exits 5 when rate limited and 6 when the upstream is down', async () => {
    fake.addFault({ match: 'ratelimited', action: { kind: 'rate-limit' } });
    fake.addFault({
      match: 'broken',
      action: { kind: 'status', status: 502, body: { error: 'HTTP 502: Bad Gateway' } },
    });
    const limited = await lookup(['profile', 'ratelimited.eth']);
    const down = await lookup(['profile', 'broken.eth']);
    fake.clearFaults();
    expect(limited.code).toBe(EXIT_CODES.rateLimited);
    expect(down.code).toBe(EXIT_CODES.upstream);
  }, 60_000);
});

describe('formatReadable', () => {
  it('indents nested values and leaves out nulls and empty arrays', () => {
    expect(formatReadable({ a: 1, b: null, c: { d: 'x', e: [] }, f: ['y'] })).toBe(
      'a: 1\nc:\n  d: x\nf:\n  [0]: y',
    );
  });
});
