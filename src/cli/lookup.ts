import 'dotenv/config';
import { parseArgs } from 'node:util';
import { ConfigError, configSecrets, loadConfig } from '../app/config.ts';
import { createWeb3BioFromConfig } from '../app/wiring.ts';
import { createLogger, scrubSecrets, scrubValue } from '../ops/log.ts';
import { isWeb3BioError, type Web3BioErrorKind } from '../web3bio/errors.ts';
import { PLATFORM_SEGMENTS, type PlatformSegment } from '../web3bio/types.ts';

/** Exit codes, documented in the README. */
export const EXIT_CODES = {
  ok: 0,
  unexpected: 1,
  invalidInput: 2,
  notFound: 3,
  auth: 4,
  rateLimited: 5,
  upstream: 6,
} as const;

const KIND_EXIT: Record<Web3BioErrorKind, number> = {
  invalid_identity: EXIT_CODES.invalidInput,
  not_found: EXIT_CODES.notFound,
  unauthorized: EXIT_CODES.auth,
  api_key_required: EXIT_CODES.auth,
  rate_limited: EXIT_CODES.rateLimited,
  upstream: EXIT_CODES.upstream,
  timeout: EXIT_CODES.upstream,
  network: EXIT_CODES.upstream,
  schema: EXIT_CODES.upstream,
};

const ENDPOINTS = ['profile', 'ns', 'batch', 'credential', 'domain', 'wallet', 'avatar'] as const;
type Endpoint = (typeof ENDPOINTS)[number];

const USAGE = `Usage: npm run lookup -- <endpoint> <identity...> [--platform P] [--json]
  endpoints: ${ENDPOINTS.join(', ')}
  batch takes platform,identity pairs (any number), e.g. ens,vitalik.eth farcaster,dwr.eth
  --platform ${PLATFORM_SEGMENTS.join('|')} (profile and ns)
Reads WEB3BIO_API_URL and WEB3BIO_API_KEY from the environment or .env.
Exit codes: 0 ok, 2 invalid input, 3 not found, 4 auth, 5 rate limited, 6 upstream failure, 1 other.`;

/** Readable text for any JSON-like value: `key: value` lines, nested values indented, nulls left out. */
export function formatReadable(value: unknown, indent = ''): string {
  if (value === null || value === undefined) return '';
  if (typeof value !== 'object') return `${value}`;
  const lines: string[] = [];
  const entries = Array.isArray(value) ? value.map((v, i) => [`[${i}]`, v] as const) : Object.entries(value);
  for (const [key, child] of entries) {
    if (child === null || child === undefined || (Array.isArray(child) && child.length === 0)) continue;
    if (typeof child === 'object') {
      const nested = formatReadable(child, `${indent}  `);
      if (nested) lines.push(`${indent}${key}:\n${nested}`);
    } else {
      lines.push(`${indent}${key}: ${child}`);
    }
  }
  return lines.join('\n');
}

async function run(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      platform: { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean' },
    },
  });
  const [endpoint, ...identities] = positionals;
  if (values.help || !endpoint) {
    console.log(USAGE);
    return values.help ? EXIT_CODES.ok : EXIT_CODES.invalidInput;
  }
  if (!ENDPOINTS.includes(endpoint as Endpoint) || identities.length === 0) {
    console.error(
      `invalid_input: ${ENDPOINTS.includes(endpoint as Endpoint) ? 'give at least one identity' : `unknown endpoint "${endpoint}"`}\n${USAGE}`,
    );
    return EXIT_CODES.invalidInput;
  }
  const platform = values.platform;
  if (platform !== undefined && !PLATFORM_SEGMENTS.includes(platform as PlatformSegment)) {
    console.error(`invalid_input: unknown platform "${platform}" (one of ${PLATFORM_SEGMENTS.join(', ')})`);
    return EXIT_CODES.invalidInput;
  }

  // Only the Web3.bio keys matter here, so the CLI runs without Discord credentials.
  const config = loadConfig({
    DISCORD_TOKEN: '-',
    DISCORD_APPLICATION_ID: '00000000000000000',
    ...process.env,
  });
  const secrets = configSecrets(config);
  const logger = createLogger({ level: 'silent', secrets });
  const client = createWeb3BioFromConfig({ ...config, REDIS_URL: undefined }, logger);
  try {
    const results: unknown[] = [];
    if (endpoint === 'batch') {
      const entries = await client.getProfilesBatch(identities);
      results.push(...entries.map((e) => ({ ...e, result: e.result ?? 'not found' })));
    } else {
      for (const identity of identities)
        results.push(
          await lookupOne(
            client,
            endpoint as Exclude<Endpoint, 'batch'>,
            identity,
            platform as PlatformSegment | undefined,
          ),
        );
    }
    const output = scrubValue(results.length === 1 ? results[0] : results, secrets);
    console.log(values.json ? JSON.stringify(output, null, 2) : formatReadable(output));
    return EXIT_CODES.ok;
  } catch (error) {
    if (isWeb3BioError(error)) {
      console.error(scrubSecrets(`${error.kind}: ${error.message}`, secrets));
      return KIND_EXIT[error.kind];
    }
    console.error(
      scrubSecrets(`unexpected: ${error instanceof Error ? error.message : String(error)}`, secrets),
    );
    return EXIT_CODES.unexpected;
  } finally {
    await client.close();
  }
}

async function lookupOne(
  client: ReturnType<typeof createWeb3BioFromConfig>,
  endpoint: Exclude<Endpoint, 'batch'>,
  identity: string,
  platform: PlatformSegment | undefined,
): Promise<unknown> {
  switch (endpoint) {
    case 'profile':
      return (
        platform ? await client.getPlatformProfile(platform, identity) : await client.getProfiles(identity)
      ).data;
    case 'ns':
      return (
        platform
          ? await client.getPlatformNsProfile(platform, identity)
          : await client.getNsProfiles(identity)
      ).data;
    case 'credential':
      return (await client.getCredentials(identity)).data;
    case 'domain':
      return (await client.getDomain(identity)).data;
    case 'wallet':
      return (await client.getWallet(identity)).data;
    case 'avatar':
      return (await client.getAvatar(identity)).data;
  }
}

if (import.meta.main) {
  run(process.argv.slice(2))
    .then((code) => {
      process.exitCode = code;
    })
    .catch((error: unknown) => {
      console.error(
        error instanceof ConfigError ? `invalid_input: ${error.message}` : `unexpected: ${String(error)}`,
      );
      process.exitCode = error instanceof ConfigError ? EXIT_CODES.invalidInput : EXIT_CODES.unexpected;
    });
}
