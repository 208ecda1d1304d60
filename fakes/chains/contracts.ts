/**
 * Where the stand-in chains hold the tokens that tests, benchmarks and the offline demo put on them: made-up
 * EVM addresses (no real contract lives there), and USDC's real mint on Solana with a well-known holder.
 */
export const TEST_TOKEN = '0x00000000000000000000000000000000000a11ce';
export const TEST_NFT = '0x0000000000000000000000000000000000000721';
export const TEST_MULTI = '0x0000000000000000000000000000000000001155';
export const USDC_MINT = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';
export const SOLANA_HOLDER = '9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM';
