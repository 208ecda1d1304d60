import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import {
  ConfigError,
  ConfigSchema,
  configSecrets,
  loadConfig,
  rateLimitOption,
  SECRET_KEYS,
} from '../../src/app/config.ts';
import { createLogger, scrubSecrets } from '../../src/ops/log.ts';

const REQUIRED = { DISCORD_TOKEN: 'token-abc', DISCORD_APPLICATION_ID: '123456789012345678' };
const ROOT = join(import.meta.dirname, '..', '..');

function problemsOf(env: Record<string, string | undefined>): string[] {
  try {
    loadConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe('loadConfig', () => {
  it('fills every default from the required keys alone', () => {
    const config = loadConfig(REQUIRED);
    expect(config).toMatchObject({
      WEB3BIO_API_URL: 'https://api.web3.bio',
      DATA_DIR: './data',
      GATING_ENABLED: false,
      CACHE_TTL_DOMAIN_SECONDS: 900,
      USER_COOLDOWN_COMMANDS: 5,
      LOG_LEVEL: 'info',
    });
    expect(config.WEB3BIO_API_KEY).toBeUndefined();
  });

  it('treats blank values as unset', () => {
    const config = loadConfig({
      ...REQUIRED,
      WEB3BIO_API_KEY: '  ',
      LOG_LEVEL: '',
      HTTP_PORT: '',
      GATING_ENABLED: '',
    });
    expect(config.WEB3BIO_API_KEY).toBeUndefined();
    expect(config.LOG_LEVEL).toBe('info');
    expect(config.HTTP_PORT).toBeUndefined();
    expect(config.GATING_ENABLED).toBe(false);
  });

  it('lists every bad or missing key at once, pointing at .env.example', () => {
    const env = {
      WEB3BIO_API_URL: 'ftp://x',
      HTTP_PORT: 'abc',
      GATING_ENABLED: 'true',
      REDIS_URL: 'http://x',
    };
    const problems = problemsOf(env);
    for (const key of [
      'DISCORD_TOKEN',
      'DISCORD_APPLICATION_ID',
      'WEB3BIO_API_URL',
      'HTTP_PORT',
      'REDIS_URL',
      'PUBLIC_URL',
    ]) {
      expect(problems.some((p) => p.startsWith(key))).toBe(true);
    }
    expect(() => loadConfig(env)).toThrow(/\.env\.example/);
  });

  it('refuses LINKED_ROLES_ENABLED without the secret, the encryption key and PUBLIC_URL, naming each', () => {
    const key = 'ab'.repeat(32);
    const on = { ...REQUIRED, LINKED_ROLES_ENABLED: 'true', GATING_ENABLED: 'true' };
    const problems = problemsOf(on).filter((p) => p.startsWith('LINKED_ROLES_ENABLED'));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(
      /^LINKED_ROLES_ENABLED=true needs DISCORD_CLIENT_SECRET, TOKEN_ENCRYPTION_KEY, PUBLIC_URL/,
    );
    expect(
      problemsOf({ ...on, DISCORD_CLIENT_SECRET: 'client-secret-1', PUBLIC_URL: 'https://bot.example' })[0],
    ).toMatch(/needs TOKEN_ENCRYPTION_KEY \(/);
    const full = {
      ...on,
      DISCORD_CLIENT_SECRET: 'client-secret-1',
      PUBLIC_URL: 'https://bot.example',
      TOKEN_ENCRYPTION_KEY: key,
    };
    expect(loadConfig(full)).toMatchObject({ LINKED_ROLES_ENABLED: true, TOKEN_ENCRYPTION_KEY: key });
    expect(loadConfig(REQUIRED).LINKED_ROLES_ENABLED).toBe(false);
    const bad = problemsOf({ ...full, TOKEN_ENCRYPTION_KEY: 'too-short-secret-value' });
    expect(bad).toHaveLength(1);
    expect(bad[0]).toMatch(/^TOKEN_ENCRYPTION_KEY must be 32 random bytes/);
    expect(bad[0]).not.toContain('too-short-secret-value');
    expect(configSecrets(loadConfig(full))).toContain(key);
    // Linked Roles alone (no role gating) is a supported setup.
    expect(loadConfig({ ...full, GATING_ENABLED: 'false' })).toMatchObject({
      LINKED_ROLES_ENABLED: true,
      GATING_ENABLED: false,
    });
  });

  it('refuses DASHBOARD_ENABLED without gating, the secret, the key and PUBLIC_URL; bounds the rights’ age to 60 s', () => {
    const dashboard = problemsOf({ ...REQUIRED, DASHBOARD_ENABLED: 'true' }).filter((p) =>
      p.startsWith('DASHBOARD_ENABLED'),
    );
    expect(dashboard).toEqual([
      expect.stringMatching(
        /^DASHBOARD_ENABLED=true needs GATING_ENABLED=true, DISCORD_CLIENT_SECRET, TOKEN_ENCRYPTION_KEY, PUBLIC_URL \(/,
      ),
    ]);
    const full = {
      ...REQUIRED,
      DASHBOARD_ENABLED: 'true',
      GATING_ENABLED: 'true',
      DISCORD_CLIENT_SECRET: 'client-secret-1',
      TOKEN_ENCRYPTION_KEY: 'ab'.repeat(32),
      PUBLIC_URL: 'https://bot.example',
    };
    expect(loadConfig(full)).toMatchObject({ DASHBOARD_ENABLED: true, DASHBOARD_RIGHTS_SECONDS: 60 });
    expect(loadConfig({ ...full, DASHBOARD_RIGHTS_SECONDS: '5' }).DASHBOARD_RIGHTS_SECONDS).toBe(5);
    expect(problemsOf({ ...full, DASHBOARD_RIGHTS_SECONDS: '61' })[0]).toMatch(/^DASHBOARD_RIGHTS_SECONDS /);
    expect(loadConfig(REQUIRED).DASHBOARD_ENABLED).toBe(false);
  });

  it('reads DISCORD_PUBLIC_KEY as 64 hex characters (lower-cased), naming the key but not the value when bad', () => {
    const key = 'AB'.repeat(32);
    expect(loadConfig({ ...REQUIRED, DISCORD_PUBLIC_KEY: key }).DISCORD_PUBLIC_KEY).toBe(key.toLowerCase());
    expect(loadConfig({ ...REQUIRED, DISCORD_PUBLIC_KEY: ' ' }).DISCORD_PUBLIC_KEY).toBeUndefined();
    for (const bad of ['ab'.repeat(31), `${'ab'.repeat(31)}zz`, `0x${'ab'.repeat(31)}`]) {
      const problems = problemsOf({ ...REQUIRED, DISCORD_PUBLIC_KEY: bad });
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(/^DISCORD_PUBLIC_KEY must be the application public key/);
      expect(problems[0]).not.toContain(bad);
    }
  });

  it('reads SHARD_COUNT (auto or a number) and refuses shards with gating on SQLite', () => {
    expect(loadConfig(REQUIRED).SHARD_COUNT).toBeUndefined();
    expect(loadConfig({ ...REQUIRED, SHARD_COUNT: 'auto' }).SHARD_COUNT).toBe('auto');
    expect(loadConfig({ ...REQUIRED, SHARD_COUNT: '4', SHARDS_PER_PROCESS: '2' })).toMatchObject({
      SHARD_COUNT: 4,
      SHARDS_PER_PROCESS: 2,
      SHARD_SPAWN_DELAY_SECONDS: 7,
    });
    expect(problemsOf({ ...REQUIRED, SHARD_COUNT: 'many' })[0]).toMatch(
      /^SHARD_COUNT must be auto or a whole number/,
    );
    expect(problemsOf({ ...REQUIRED, SHARD_COUNT: '0' })).toHaveLength(1);
    const gating = {
      ...REQUIRED,
      GATING_ENABLED: 'true',
      PUBLIC_URL: 'https://bot.example',
      SHARD_COUNT: '2',
    };
    expect(problemsOf(gating)).toEqual([
      'SHARD_COUNT with gating or Linked Roles needs DATABASE_URL (every shard process shares one PostgreSQL store)',
    ]);
    expect(loadConfig({ ...gating, DATABASE_URL: 'postgres://db/bot' }).SHARD_COUNT).toBe(2);
  });

  it('reads SHARD_IDS (ids and ranges) with a numeric SHARD_COUNT and REDIS_URL, and says what else it needs', () => {
    const split = { ...REQUIRED, SHARD_COUNT: '32', REDIS_URL: 'redis://127.0.0.1:6379' };
    expect(loadConfig(split).SHARD_IDS).toBeUndefined();
    expect(loadConfig({ ...split, SHARD_IDS: '0-3, 8,10-11,2' }).SHARD_IDS).toEqual([0, 1, 2, 3, 8, 10, 11]);
    expect(problemsOf({ ...split, SHARD_IDS: '0-x' })).toEqual([
      'SHARD_IDS "0-x" is neither a shard id nor a range such as 0-15',
    ]);
    expect(problemsOf({ ...split, SHARD_IDS: '5-2' })).toEqual(['SHARD_IDS the range 5-2 runs backwards']);
    expect(problemsOf({ ...split, SHARD_IDS: '30-33' })).toEqual([
      'SHARD_IDS names shard 32, but SHARD_COUNT=32 has shards 0-31',
    ]);
    expect(problemsOf({ ...split, SHARD_COUNT: 'auto', SHARD_IDS: '0-1' })[0]).toMatch(
      /^SHARD_IDS needs SHARD_COUNT as a number/,
    );
    expect(problemsOf({ ...REQUIRED, SHARD_COUNT: '4', SHARD_IDS: '0-1' })[0]).toMatch(
      /^SHARD_IDS needs REDIS_URL: the machines that share the bot’s shards space their identifies/,
    );
  });

  it('reads SHARD_RESTARTS_PER_HOUR: 10 by default, 0 for never, a whole number at most 1000', () => {
    expect(loadConfig(REQUIRED).SHARD_RESTARTS_PER_HOUR).toBe(10);
    expect(loadConfig({ ...REQUIRED, SHARD_RESTARTS_PER_HOUR: ' ' }).SHARD_RESTARTS_PER_HOUR).toBe(10);
    expect(loadConfig({ ...REQUIRED, SHARD_RESTARTS_PER_HOUR: '3' }).SHARD_RESTARTS_PER_HOUR).toBe(3);
    expect(loadConfig({ ...REQUIRED, SHARD_RESTARTS_PER_HOUR: '0' }).SHARD_RESTARTS_PER_HOUR).toBe(0);
    for (const bad of ['-1', '1.5', 'many', '1001']) {
      const problems = problemsOf({ ...REQUIRED, SHARD_RESTARTS_PER_HOUR: bad });
      expect(problems).toHaveLength(1);
      expect(problems[0]).toMatch(/^SHARD_RESTARTS_PER_HOUR /);
    }
  });

  it('INTERACTIONS=http refuses to start without the public key and PUBLIC_URL, and says where each goes', () => {
    expect(loadConfig(REQUIRED).INTERACTIONS).toBe('gateway');
    expect(loadConfig(REQUIRED).PROCESS_ROLE).toBe('all');
    const [problem] = problemsOf({ ...REQUIRED, INTERACTIONS: 'http' });
    expect(problem).toMatch(
      /^INTERACTIONS=http needs DISCORD_PUBLIC_KEY and PUBLIC_URL: .*Interactions Endpoint URL/,
    );
    expect(problemsOf({ ...REQUIRED, INTERACTIONS: 'http', PUBLIC_URL: 'https://bot.example' })).toEqual([
      expect.stringMatching(/^INTERACTIONS=http needs DISCORD_PUBLIC_KEY:/),
    ]);
    const http = {
      ...REQUIRED,
      INTERACTIONS: 'http',
      PUBLIC_URL: 'https://bot.example',
      DISCORD_PUBLIC_KEY: 'a'.repeat(64),
    };
    const redis = { REDIS_URL: 'redis://127.0.0.1:6379' };
    expect(loadConfig({ ...http, ...redis, PROCESS_ROLE: 'web' }).PROCESS_ROLE).toBe('web');
    expect(problemsOf({ ...REQUIRED, ...redis, PROCESS_ROLE: 'web' })).toEqual([
      expect.stringMatching(/set INTERACTIONS=http too/),
    ]);
    expect(problemsOf({ ...http, ...redis, PROCESS_ROLE: 'web', GATING_ENABLED: 'true' })).toEqual([
      expect.stringMatching(/^PROCESS_ROLE=web with gating or Linked Roles needs DATABASE_URL/),
      expect.stringMatching(/^PROCESS_ROLE=web with gating needs TOKEN_ENCRYPTION_KEY/),
    ]);
    expect(problemsOf({ ...http, INTERACTIONS: 'webhooks' })[0]).toMatch(/^INTERACTIONS /);
  });

  it('PROCESS_ROLE=web refuses to start without REDIS_URL, where replicas share the deliveries they acted on', () => {
    const web = {
      ...REQUIRED,
      INTERACTIONS: 'http',
      PUBLIC_URL: 'https://bot.example',
      DISCORD_PUBLIC_KEY: 'a'.repeat(64),
      PROCESS_ROLE: 'web',
    };
    expect(problemsOf(web)).toEqual([
      'PROCESS_ROLE=web needs REDIS_URL: web replicas share the deliveries they acted on there, so a delivery replayed to another replica is refused',
    ]);
    expect(problemsOf({ ...web, REDIS_URL: ' ' })).toEqual([
      expect.stringMatching(/^PROCESS_ROLE=web needs REDIS_URL/),
    ]);
    expect(loadConfig({ ...web, REDIS_URL: 'redis://127.0.0.1:6379' }).REDIS_URL).toBe(
      'redis://127.0.0.1:6379',
    );
    // A lone process (all) and the gateway worker keep their own set: Redis stays optional there.
    expect(problemsOf({ ...web, PROCESS_ROLE: 'all' })).toEqual([]);
    expect(problemsOf({ ...web, PROCESS_ROLE: 'gateway' })).toEqual([]);
  });

  it('a split deployment with gating needs TOKEN_ENCRYPTION_KEY, which seals the handed-over interaction tokens', () => {
    const split = {
      ...REQUIRED,
      INTERACTIONS: 'http',
      PUBLIC_URL: 'https://bot.example',
      DISCORD_PUBLIC_KEY: 'a'.repeat(64),
      REDIS_URL: 'redis://127.0.0.1:6379',
      DATABASE_URL: 'postgres://db/bot',
      GATING_ENABLED: 'true',
    };
    for (const role of ['web', 'gateway']) {
      expect(problemsOf({ ...split, PROCESS_ROLE: role })).toEqual([
        expect.stringMatching(new RegExp(`^PROCESS_ROLE=${role} with gating needs TOKEN_ENCRYPTION_KEY`)),
      ]);
      expect(problemsOf({ ...split, PROCESS_ROLE: role, TOKEN_ENCRYPTION_KEY: 'ab'.repeat(32) })).toEqual([]);
    }
    // One process hands nothing over.
    expect(problemsOf({ ...split, PROCESS_ROLE: 'all' })).toEqual([]);
  });

  it('never echoes a value in its messages', () => {
    const problems = problemsOf({
      DISCORD_TOKEN: 'secret-token-value',
      DISCORD_APPLICATION_ID: 'not-a-snowflake-secret',
    });
    expect(problems.join('\n')).not.toMatch(/secret/);
  });

  it('reads booleans and numbers from text', () => {
    const config = loadConfig({
      ...REQUIRED,
      GATING_ENABLED: 'yes',
      PUBLIC_URL: 'https://v.example.org',
      DEFER_AFTER_MS: '900',
    });
    expect(config.GATING_ENABLED).toBe(true);
    expect(config.DEFER_AFTER_MS).toBe(900);
    expect(problemsOf({ ...REQUIRED, DEFER_AFTER_MS: '5000' })).toHaveLength(1);
  });

  it('parses WEB3BIO_RATE_LIMIT', () => {
    expect(rateLimitOption(undefined)).toBeUndefined();
    expect(rateLimitOption('off')).toBeNull();
    expect(rateLimitOption('5/10s')).toEqual({ requests: 5, intervalMs: 10_000 });
    expect(problemsOf({ ...REQUIRED, WEB3BIO_RATE_LIMIT: '5 per minute' })).toHaveLength(1);
  });

  it('reads TRUST_PROXY as a hop count or a list of proxy addresses and ranges; unset trusts no one', () => {
    expect(loadConfig(REQUIRED).TRUST_PROXY).toBeUndefined();
    expect(loadConfig({ ...REQUIRED, TRUST_PROXY: ' ' }).TRUST_PROXY).toBeUndefined();
    expect(loadConfig({ ...REQUIRED, TRUST_PROXY: '1' }).TRUST_PROXY).toBe(1);
    expect(loadConfig({ ...REQUIRED, TRUST_PROXY: '10.0.0.2, 172.16.0.0/12,::1' }).TRUST_PROXY).toEqual([
      '10.0.0.2',
      '172.16.0.0/12',
      '::1',
    ]);
    for (const bad of ['0', 'true', 'proxy.example', '10.0.0.0/33', '10.0.0.1/8/1', '*'])
      expect(problemsOf({ ...REQUIRED, TRUST_PROXY: bad }), bad).toEqual([
        expect.stringMatching(/^TRUST_PROXY must be a hop count/),
      ]);
  });

  it('refuses METRICS_PORT beyond loopback without METRICS_TOKEN, saying how to fix it', () => {
    expect(problemsOf({ ...REQUIRED, METRICS_PORT: '9100', METRICS_HOST: '0.0.0.0' })).toEqual([
      'METRICS_HOST=0.0.0.0 would serve /metrics and /readyz beyond this machine without a token: set METRICS_TOKEN, or METRICS_HOST=127.0.0.1',
    ]);
    expect(problemsOf({ ...REQUIRED, METRICS_PORT: '9100' })).toEqual([]);
    expect(problemsOf({ ...REQUIRED, METRICS_PORT: '9100', METRICS_HOST: '::1' })).toEqual([]);
    expect(
      problemsOf({
        ...REQUIRED,
        METRICS_PORT: '9100',
        METRICS_HOST: '0.0.0.0',
        METRICS_TOKEN: 'x'.repeat(20),
      }),
    ).toEqual([]);
  });

  it('refuses http:// RPC and relay URLs to hosts beyond this machine, all at once, without echoing them', () => {
    const why = 'must be an https:// URL (http:// only to this machine: 127.0.0.0/8, localhost or [::1])';
    const problems = problemsOf({
      ...REQUIRED,
      RPC_URL: 'http://user:rpc-secret-1@eth.example/v1',
      OPTIMISM_RPC_URL: 'http://10.0.0.5:8545',
      FARCASTER_RELAY_URL: 'http://relay.example',
    });
    expect(problems).toEqual([`RPC_URL ${why}`, `FARCASTER_RELAY_URL ${why}`, `OPTIMISM_RPC_URL ${why}`]);
    expect(problems.join('\n')).not.toContain('rpc-secret-1');
    for (const bad of [
      'http://localhost.example',
      'http://127.0.0.1.nip.io',
      'http://128.0.0.1',
      'http://[::2]:8545',
      'http://0.0.0.0:8545',
      'http://192.168.1.10',
    ])
      expect(problemsOf({ ...REQUIRED, OPTIMISM_RPC_URL: bad }), bad).toEqual([`OPTIMISM_RPC_URL ${why}`]);
  });

  it('accepts https:// RPC and relay URLs anywhere, and http:// to 127.0.0.0/8, localhost and [::1]', () => {
    for (const good of [
      'https://eth.example/v1/key',
      'https://10.0.0.5:8545',
      'http://127.0.0.1:8545',
      'http://127.4.5.6',
      'http://localhost:8545',
      'http://LOCALHOST',
      'http://[::1]:8545',
    ]) {
      const env = { ...REQUIRED, RPC_URL: good, OPTIMISM_RPC_URL: good, FARCASTER_RELAY_URL: good };
      expect(problemsOf(env), good).toEqual([]);
      expect(loadConfig(env)).toMatchObject({ RPC_URL: good, OPTIMISM_RPC_URL: good });
    }
    expect(loadConfig(REQUIRED).FARCASTER_RELAY_URL).toBe('https://relay.farcaster.xyz');
  });

  it('every key is documented in .env.example and the operators’ configuration page', async () => {
    const example = await readFile(join(ROOT, '.env.example'), 'utf8');
    const readme = await readFile(join(ROOT, 'docs/operators/configuration.md'), 'utf8');
    for (const key of Object.keys(ConfigSchema.shape)) {
      expect(example).toMatch(new RegExp(`^${key}=$`, 'm'));
      expect(
        readme.includes(key) ||
          readme.includes(key.replace(/_(PROFILE|CREDENTIAL|DOMAIN|AVATAR|WALLET)_/, '_*_')),
      ).toBe(true);
    }
  });
});

describe('logger', () => {
  function capture() {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    return { lines, destination };
  }

  it('scrubs configured secrets wherever they appear, and redacts known fields', async () => {
    const { lines, destination } = capture();
    const token = 'MTIzNDU2Nzg5.discord-token';
    const logger = createLogger({
      level: 'info',
      secrets: [token, 'web3bio-key-42', undefined],
      destination,
    });
    logger.info(
      { token, nested: { apiKey: 'x' }, err: new Error(`login failed for ${token}`) },
      `using web3bio-key-42`,
    );
    await new Promise((resolve) => setImmediate(resolve));
    const out = lines.join('');
    expect(out).not.toContain(token);
    expect(out).not.toContain('web3bio-key-42');
    expect(out).toContain('[redacted]');
    expect(JSON.parse(out).nested.apiKey).toBe('[redacted]');
  });

  it('redacts known secret fields by name, with no secret configured, and leaves the logged object as it was', async () => {
    const { lines, destination } = capture();
    const logger = createLogger({ level: 'info', secrets: [], destination });
    const headers = { authorization: 'Bearer abc', 'x-api-key': 'k-1', accept: 'json' };
    const failure = Object.assign(new Error('refused'), { token: 'interaction-token' });
    const entry = {
      token: 'a-token',
      password: undefined,
      headers,
      call: { apiKey: 'k-2', route: '/x' },
      config: { DISCORD_TOKEN: 'discord-token', DATABASE_URL: 'postgres://u:p@db/x', LOG_LEVEL: 'info' },
      err: failure,
    };
    logger.child({ session: { password: 'hunter2' } }).info(entry, 'calling');
    await new Promise((resolve) => setImmediate(resolve));
    const line = lines.join('');
    for (const secret of ['a-token', 'Bearer abc', 'k-1', 'k-2', 'discord-token', 'postgres://', 'hunter2'])
      expect(line).not.toContain(secret);
    expect(line).not.toContain('interaction-token');
    const out = JSON.parse(line);
    expect(out).toMatchObject({
      token: '[redacted]',
      headers: { authorization: '[redacted]', 'x-api-key': '[redacted]', accept: 'json' },
      call: { apiKey: '[redacted]', route: '/x' },
      config: { DISCORD_TOKEN: '[redacted]', DATABASE_URL: '[redacted]', LOG_LEVEL: 'info' },
      err: { message: 'refused', token: '[redacted]' },
      session: { password: '[redacted]' },
    });
    expect(out).not.toHaveProperty('password');
    expect(entry.token).toBe('a-token');
    expect(headers.authorization).toBe('Bearer abc');
    expect(failure.token).toBe('interaction-token');
  });

  // Secrets with the characters JSON escapes: scrubbing the finished line would miss `tok\"en\\…`.
  const TOKEN = 'MTIz"tok\\en.discord';
  const API_KEY = 'key"with\\backslash42';
  const DB_PASSWORD = 'db"pass\\word@1';
  const REDIS_PASSWORD = 'redis"pass\\2';
  const secretEnv = {
    ...REQUIRED,
    DISCORD_TOKEN: TOKEN,
    WEB3BIO_API_KEY: API_KEY,
    DATABASE_URL: `postgres://bot:${encodeURIComponent(DB_PASSWORD)}@db.internal:5432/bot`,
    REDIS_URL: `redis://:${encodeURIComponent(REDIS_PASSWORD)}@cache.internal:6379`,
  };

  it('configSecrets holds every secret in the config: token, API key, database and Redis passwords', () => {
    const config = loadConfig(secretEnv);
    const secrets = configSecrets(config);
    for (const secret of [TOKEN, API_KEY, DB_PASSWORD, REDIS_PASSWORD]) expect(secrets).toContain(secret);
    expect(secrets).toContain(encodeURIComponent(DB_PASSWORD));
    expect(configSecrets(loadConfig({ ...REQUIRED, DISCORD_TOKEN: '-' }))).toEqual([]);
    expect(configSecrets({ RPC_URL: 'https://user:rpc-secret-1@rpc.example' })).toEqual(['rpc-secret-1']);
  });

  it('SECRET_KEYS lists every config key whose name says it holds a secret', () => {
    // DISCORD_PUBLIC_KEY is the one `_KEY` that is public: Discord shows it to anyone with the app's page.
    const secretLooking = Object.keys(ConfigSchema.shape).filter(
      (key) => /TOKEN|SECRET|_KEY$|PASSWORD|^(DATABASE|REDIS)_URL$/.test(key) && key !== 'DISCORD_PUBLIC_KEY',
    );
    expect([...SECRET_KEYS].sort()).toEqual(secretLooking.sort());
  });

  it('scrubs secrets containing " and \\ from every part of an entry before serialising', async () => {
    const { lines, destination } = capture();
    const config = loadConfig(secretEnv);
    const logger = createLogger({ level: 'info', secrets: configSecrets(config), destination });
    const all = [TOKEN, API_KEY, DB_PASSWORD, REDIS_PASSWORD];
    logger.child({ session: `s ${TOKEN}` }).warn(
      {
        note: `key ${API_KEY} in text`,
        list: [{ deep: DB_PASSWORD }],
        // A config nested deeper than the redaction paths: its secrets are scrubbed by value.
        wiring: { web3bio: { config: { ...config } } },
        err: new Error(`redis refused ${REDIS_PASSWORD}`, { cause: new Error(`db ${DB_PASSWORD}`) }),
        config,
      },
      'connecting with %s',
      TOKEN,
    );
    logger.error(new Error(`login failed for ${TOKEN}`));
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines).toHaveLength(2);
    for (const line of lines) {
      const parsed = JSON.parse(line) as Record<string, unknown>;
      for (const secret of all) {
        expect(line).not.toContain(secret);
        expect(line).not.toContain(JSON.stringify(secret).slice(1, -1));
        expect(JSON.stringify(parsed)).not.toContain(secret);
      }
      expect(line).toContain('[redacted]');
    }
    const first = JSON.parse(lines[0] ?? '{}');
    expect(first.msg).toBe('connecting with [redacted]');
    expect(first.err.message).toContain('redis refused [redacted]');
    expect(first.err.stack).toContain('Error: redis refused [redacted]');
    expect(first.config.DISCORD_TOKEN).toBe('[redacted]');
    expect(first.config.DATABASE_URL).toBe('[redacted]');
    expect(JSON.parse(lines[1] ?? '{}').err.message).toBe('login failed for [redacted]');
  });

  it('scrubs secrets from a flat entry (strings and numbers only), in keys and values, raw or escaped', async () => {
    const { lines, destination } = capture();
    const logger = createLogger({
      level: 'info',
      secrets: configSecrets(loadConfig(secretEnv)),
      destination,
    });
    const all = [TOKEN, API_KEY, DB_PASSWORD, REDIS_PASSWORD];
    const entry = { note: `key ${API_KEY} in text`, [`field ${TOKEN}`]: 1, quoted: `"${DB_PASSWORD}"`, n: 2 };
    logger.child({ session: REDIS_PASSWORD }).info(entry, `as msg ${TOKEN}`);
    await new Promise((resolve) => setImmediate(resolve));
    expect(lines).toHaveLength(1);
    const line = lines[0] ?? '';
    for (const secret of all) {
      expect(line).not.toContain(secret);
      expect(line).not.toContain(JSON.stringify(secret).slice(1, -1));
    }
    const parsed = JSON.parse(line);
    expect(parsed).toMatchObject({ note: 'key [redacted] in text', n: 2, msg: 'as msg [redacted]' });
    expect(parsed.session).toBe('[redacted]');
    expect(entry.note).toContain(API_KEY);
  });

  it('scrubSecrets replaces every occurrence and ignores short strings', () => {
    expect(scrubSecrets('a SECRET b SECRET', ['SECRET'])).toBe('a [redacted] b [redacted]');
    expect(scrubSecrets('nothing here', ['absent'])).toBe('nothing here');
  });
});
