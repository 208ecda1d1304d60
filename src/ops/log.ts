import { type Logger, pino } from 'pino';
import { MIN_SECRET_LENGTH, SECRET_KEYS } from '../app/config.ts';

export type { Logger };

const REDACTED = '[redacted]';
const MAX_DEPTH = 12;

/**
 * Structured JSON logs. Every configured secret value is scrubbed from every string of a log entry
 * (message, fields, errors, child bindings) before it is serialised, so escaping (`"` and `\` in JSON)
 * can't hide it; known secret fields are also redacted by path. As a last line of defence, the finished
 * line is scrubbed of each secret in raw and JSON-escaped form.
 */
export function createLogger(options: {
  level: string;
  secrets: readonly (string | undefined)[];
  destination?: pino.DestinationStream;
}): Logger {
  const secrets = usableSecrets(options.secrets);
  const lineSecrets = [...new Set(secrets.flatMap((s) => [s, JSON.stringify(s).slice(1, -1)]))];
  const scrub = <T>(value: T): T => scrubValue(value, secrets);
  return pino(
    {
      level: options.level,
      base: { app: 'web3bio-discord-bot' },
      redact: {
        paths: [
          'token',
          'apiKey',
          'password',
          'headers.authorization',
          'headers["x-api-key"]',
          '*.token',
          '*.apiKey',
          '*.password',
          ...SECRET_FIELD_PATHS,
        ],
        censor: REDACTED,
      },
      // Errors are serialised (and scrubbed) by the log formatter below, wherever they sit.
      serializers: { err: (value: unknown) => value, msg: scrub },
      formatters: { log: scrub, bindings: scrub },
      hooks: {
        streamWrite: (line) => scrubSecrets(line, lineSecrets),
      },
    },
    options.destination,
  );
}

/**
 * Config fields that hold secrets, for the logger's redaction paths: a logged `config` is censored whole.
 * A `config` deeper down is covered by the value scrubbing (every configured secret, anywhere): wildcard
 * paths (`*.config.X`) made each log line cost about 25 µs instead of 6, on every interaction.
 */
const SECRET_FIELD_PATHS = SECRET_KEYS.map((key) => `config.${key}`);

/** Secrets long enough to scrub without mangling ordinary text (a 1-character secret would erase letters). */
function usableSecrets(secrets: readonly (string | undefined)[]): string[] {
  return [
    ...new Set(secrets.filter((s): s is string => typeof s === 'string' && s.length >= MIN_SECRET_LENGTH)),
  ].sort((a, b) => b.length - a.length);
}

/** Replace every occurrence of each secret in `text`. */
export function scrubSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret !== '' && out.includes(secret)) out = out.split(secret).join(REDACTED);
  }
  return out;
}

/**
 * A copy of `value` with every secret scrubbed from every string in it (keys included); errors become
 * plain objects (type, message with causes, stack, own fields) first. Cycles and depth are bounded.
 */
export function scrubValue<T>(value: T, secrets: readonly string[]): T {
  if (secrets.length === 0) return value;
  return scrubAny(value, secrets, new WeakSet(), 0) as T;
}

function scrubAny(value: unknown, secrets: readonly string[], seen: WeakSet<object>, depth: number): unknown {
  if (typeof value === 'string') return scrubSecrets(value, secrets);
  if (typeof value !== 'object' || value === null) return value;
  if (seen.has(value) || depth > MAX_DEPTH) return '[…]';
  seen.add(value);
  const toJson = (value as { toJSON?: unknown }).toJSON;
  if (typeof toJson === 'function' && !(value instanceof Error))
    return scrubAny(toJson.call(value), secrets, seen, depth + 1);
  const source = value instanceof Error ? pino.stdSerializers.err(value) : value;
  if (Array.isArray(source)) return source.map((item) => scrubAny(item, secrets, seen, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(source)) {
    if (key === 'raw' && value instanceof Error) continue;
    out[scrubSecrets(key, secrets)] = scrubAny(item, secrets, seen, depth + 1);
  }
  return out;
}
