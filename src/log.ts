import { type Logger, pino } from 'pino';

export type { Logger };

const REDACTED = '[redacted]';

/**
 * Structured JSON logs. Known secret fields are redacted by path, and as a last line of defence every
 * configured secret value is scrubbed from the final line, wherever it appears.
 */
export function createLogger(options: {
  level: string;
  secrets: readonly (string | undefined)[];
  destination?: pino.DestinationStream;
}): Logger {
  const secrets = options.secrets.filter((s): s is string => typeof s === 'string' && s.length >= 6);
  return pino(
    {
      level: options.level,
      base: { app: 'web3bio-discord-bot' },
      redact: {
        paths: [
          'token',
          'apiKey',
          'headers.authorization',
          'headers["x-api-key"]',
          '*.token',
          '*.apiKey',
          'config.DISCORD_TOKEN',
          'config.WEB3BIO_API_KEY',
        ],
        censor: REDACTED,
      },
      hooks: {
        streamWrite: (line) => scrubSecrets(line, secrets),
      },
    },
    options.destination,
  );
}

/** Replace every occurrence of each secret in `text`. */
export function scrubSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (out.includes(secret)) out = out.split(secret).join(REDACTED);
  }
  return out;
}
