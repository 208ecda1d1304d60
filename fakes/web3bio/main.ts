/**
 * `npm run fake-api [-- --mode spec|live] [--latency MS] [--key KEY[:basic]]`: the stand-in Web3.bio API for
 * running the bot offline. Listens on 127.0.0.1:$FAKE_WEB3BIO_PORT (default 8787); beside it, the
 * Farcaster relay and OP Mainnet node stand-ins for Sign in with Farcaster (ports 8788 and 8789), and an
 * EVM and a Solana node for holdings rules (8790 and 8791).
 */
import { TEST_NFT, USDC_MINT } from '../chains/contracts.ts';
import { DEMO_TOKEN, demoHolder, startChainStandIns } from '../chains/demo.ts';
import { startFarcasterStandIns } from '../farcaster/demo.ts';
import { startFakeWeb3Bio } from './server.ts';

export const DEFAULT_PORT = 8787;
const USAGE = 'usage: npm run fake-api -- [--mode live|spec] [--latency MS] [--key KEY[:basic]]...';

export interface RunnerOptions {
  mode: 'live' | 'spec';
  latencyMs: number;
  apiKeys: Record<string, 'full' | 'basic'>;
}

/** Parse the runner's flags; throws an Error whose message is fit to print. */
export function parseRunnerArgs(argv: readonly string[]): RunnerOptions {
  const options: RunnerOptions = { mode: 'live', latencyMs: 0, apiKeys: {} };
  for (let index = 0; index < argv.length; index++) {
    const flag = argv[index];
    const value = argv[index + 1];
    if (flag === '--help' || flag === '-h') throw new Error(USAGE);
    if (value === undefined) throw new Error(`${flag} needs a value\n${USAGE}`);
    index++;
    if (flag === '--mode') {
      if (value !== 'live' && value !== 'spec') throw new Error(`--mode must be live or spec\n${USAGE}`);
      options.mode = value;
    } else if (flag === '--latency') {
      const ms = Number(value);
      if (!Number.isInteger(ms) || ms < 0)
        throw new Error(`--latency must be a whole number of ms\n${USAGE}`);
      options.latencyMs = ms;
    } else if (flag === '--key') {
      const basic = value.endsWith(':basic');
      const key = basic ? value.slice(0, -':basic'.length) : value;
      if (key === '') throw new Error(`--key needs a non-empty key\n${USAGE}`);
      options.apiKeys[key] = basic ? 'basic' : 'full';
    } else {
      throw new Error(`unknown option ${flag}\n${USAGE}`);
    }
  }
  return options;
}

/** Port from `FAKE_WEB3BIO_PORT`: blank means the default; 0 picks a free port. */
export function parsePort(value: string | undefined): number {
  if (value === undefined || value.trim() === '') return DEFAULT_PORT;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) {
    throw new Error('FAKE_WEB3BIO_PORT must be a port number (0-65535)');
  }
  return port;
}

async function main(): Promise<void> {
  let options: RunnerOptions;
  let port: number;
  try {
    options = parseRunnerArgs(process.argv.slice(2));
    port = parsePort(process.env.FAKE_WEB3BIO_PORT);
  } catch (error) {
    console.error(error instanceof Error ? error.message : String(error));
    process.exitCode = 2;
    return;
  }
  const fake = await startFakeWeb3Bio({
    port,
    mode: options.mode,
    latencyMs: options.latencyMs,
    apiKeys: options.apiKeys,
  });
  const farcaster = await startFarcasterStandIns({
    relay: port === 0 ? 0 : port + 1,
    node: port === 0 ? 0 : port + 2,
  });
  const chains = await startChainStandIns({
    evm: port === 0 ? 0 : port + 3,
    solana: port === 0 ? 0 : port + 4,
  });
  const keyCount = Object.keys(options.apiKeys).length;
  console.log(`Fake Web3.bio API (${options.mode} mode) listening on ${fake.url}`);
  console.log(`Point the bot at it: WEB3BIO_API_URL=${fake.url} npm start`);
  if (keyCount > 0) console.log(`${keyCount} API key(s) accepted; /wallet needs a full one.`);
  console.log(
    `Sign in with Farcaster offline: FARCASTER_RELAY_URL=${farcaster.relay.url} OPTIMISM_RPC_URL=${farcaster.node.url}`,
  );
  console.log('  /verify dwr.farcaster, then open the approval link: its page approves as @dwr (FID 3).');
  console.log(
    `Holdings rules offline: BASE_RPC_URL=${chains.evm.url} (any EVM chain's URL) SOLANA_RPC_URL=${chains.solana.url}`,
  );
  console.log(
    `  demo wallet ${demoHolder().address} (key: keccak256 of "web3bio-discord-bot offline demo: holder") and @dwr hold 150 of base:${DEMO_TOKEN}, an NFT of base:${TEST_NFT}; SPL mint ${USDC_MINT}`,
  );
  const stop = (signal: NodeJS.Signals) => {
    console.log(`${signal}: stopping`);
    Promise.all([fake.close(), farcaster.close(), chains.close()]).then(
      () => console.log('stopped'),
      (error: unknown) => {
        console.error('close failed', error);
        process.exitCode = 1;
      },
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

if (import.meta.main) await main();
