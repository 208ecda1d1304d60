import { describe, expect, it } from 'vitest';
import { ConfigError } from '../../src/app/config.ts';
import { loadRestProxyConfig } from '../../src/app/restProxyConfig.ts';

function problemsOf(env: Record<string, string | undefined>): string[] {
  try {
    loadRestProxyConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
}

describe('loadRestProxyConfig (PROCESS_ROLE=rest-proxy)', () => {
  it('needs only the bot token: no application id, Redis, database or Web3.bio', () => {
    const config = loadRestProxyConfig({ PROCESS_ROLE: 'rest-proxy', DISCORD_TOKEN: 'token-abc' });
    expect(config).toEqual({
      DISCORD_TOKEN: 'token-abc',
      DISCORD_API_URL: undefined,
      REST_PROXY_HOST: '127.0.0.1',
      REST_PROXY_PORT: 8080,
      LOG_LEVEL: 'info',
      DATA_DIR: './data',
    });
  });

  it('takes its address and Discord’s, blank values counting as unset', () => {
    const config = loadRestProxyConfig({
      DISCORD_TOKEN: 'token-abc',
      DISCORD_API_URL: 'http://127.0.0.1:9999/api',
      REST_PROXY_HOST: '0.0.0.0',
      REST_PROXY_PORT: '8181',
      LOG_LEVEL: ' ',
    });
    expect(config).toMatchObject({
      DISCORD_API_URL: 'http://127.0.0.1:9999/api',
      REST_PROXY_HOST: '0.0.0.0',
      REST_PROXY_PORT: 8181,
      LOG_LEVEL: 'info',
    });
  });

  it('says what is missing or wrong, every key at once, and never echoes a value', () => {
    const problems = problemsOf({
      DISCORD_TOKEN: ' ',
      DISCORD_API_URL: 'ftp://secret-host',
      REST_PROXY_PORT: '70000',
    });
    expect(problems).toEqual([
      expect.stringMatching(/^DISCORD_TOKEN is required \(the bot token.*\(PROCESS_ROLE=rest-proxy\)$/),
      expect.stringMatching(/^DISCORD_API_URL must be an http\(s\) URL/),
      expect.stringMatching(/^REST_PROXY_PORT /),
    ]);
    expect(problems.join('\n')).not.toContain('secret-host');
  });
});
