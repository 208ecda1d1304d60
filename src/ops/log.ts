import { type Logger, pino } from 'pino';
import { MIN_SECRET_LENGTH, SECRET_KEYS } from '../app/config.ts';

export type { Logger };

const REDACTED = '[redacted]';
const MAX_DEPTH = 12;

/**
 * Structured JSON logs. Every configured secret value is scrubbed from every string of a log entry
 * (message, fields, errors, child bindings): nested values and errors before they are serialised, and
 * every finished line for each secret in raw and JSON-escaped form, so escaping (`"` and `\` in JSON)
 * can't hide one. A flat entry (strings and numbers, one per interaction) is left to the line's scrub
 * (`scrubFlat`). Known secret fields are also redacted by name (`redactFields`).
 */
export function createLogger(options: {
  level: string;
  secrets: readonly (string | undefined)[];
  destination?: pino.DestinationStream;
}): Logger {
  const secrets = usableSecrets(options.secrets);
  const lineSecrets = [...new Set(secrets.flatMap((s) => [s, JSON.stringify(s).slice(1, -1)]))];
  const scrub = <T>(value: T): T => scrubValue(value, secrets);
  const clean = <T>(value: T): T => redactFields(scrub(value));
  const logger = pino(
    {
      level: options.level,
      base: { app: 'web3bio-discord-bot' },
      // Errors are serialised (and scrubbed) by the log formatter below, wherever they sit.
      serializers: { err: (value: unknown) => value, msg: scrub },
      formatters: { log: clean, bindings: clean },
      hooks: {
        streamWrite: (line) => scrubSecrets(line, lineSecrets),
      },
    },
    options.destination,
  );
  // Pino passes a child's bindings through no formatter: they are cleaned here, as every entry is. Every
  // child inherits this (pino makes a child with Object.create).
  const child = logger.child;
  logger.child = function (this: Logger, bindings, childOptions) {
    return child.call(this, clean(bindings), childOptions);
  } as Logger['child'];
  return logger;
}

/**
 * Fields redacted by name, at the top of an entry or one level down: pino's `redact` paths `token` and
 * `*.token`, done here instead because pino re-parses its paths on every line (about 5 µs a line, on
 * every interaction).
 */
const SECRET_FIELDS: ReadonlySet<string> = new Set(['token', 'apiKey', 'password']);

/** Fields redacted by name below one parent: request headers, and a logged `config`'s secrets. */
const SECRET_FIELDS_BELOW: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  ['headers', new Set(['authorization', 'x-api-key'])],
  ['config', new Set<string>(SECRET_KEYS)],
]);

/**
 * `entry` with its known secret fields censored: `token`, `apiKey` and `password` at the top or one
 * level down, `headers.authorization` and `headers["x-api-key"]`, and a logged `config`'s SECRET_KEYS.
 * A `config` deeper down is covered by the value scrubbing (every configured secret, anywhere). Copies
 * only what it changes.
 */
export function redactFields<T>(entry: T): T {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return entry;
  const fields = entry as Record<string, unknown>;
  let out: Record<string, unknown> | undefined;
  for (const key of Object.keys(fields)) {
    const value = fields[key];
    const redacted = SECRET_FIELDS.has(key)
      ? value === undefined
        ? value
        : REDACTED
      : redactChild(value, SECRET_FIELDS_BELOW.get(key));
    if (redacted === value) continue;
    out ??= { ...fields };
    out[key] = redacted;
  }
  return (out ?? entry) as T;
}

function redactChild(value: unknown, below: ReadonlySet<string> | undefined): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  const secret = (key: string) => SECRET_FIELDS.has(key) || below?.has(key) === true;
  if (!Object.keys(value).some(secret)) return value;
  // An error's message and stack are not its own enumerable fields: serialise it before copying.
  const source: Record<string, unknown> =
    value instanceof Error ? { ...pino.stdSerializers.err(value) } : { ...value };
  for (const key of Object.keys(source)) if (secret(key)) source[key] = REDACTED;
  return source;
}

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
  if (typeof value === 'string') return scrubSecrets(value, secrets) as T;
  return (scrubFlat(value) ?? scrubAny(value, secrets, new WeakSet(), 0)) as T;
}

/**
 * Most entries (one per interaction) are a plain object of strings and numbers. Pino writes their keys
 * as they are and their strings as JSON.stringify does, so the finished line's scrub, which looks for
 * each secret raw and JSON-escaped, already catches a secret anywhere in them: they are passed as they
 * are. Undefined for anything else (scrubAny's walk).
 */
function scrubFlat(value: unknown): unknown {
  if (typeof value !== 'object' || value === null || Object.getPrototypeOf(value) !== Object.prototype)
    return undefined;
  const fields = value as Record<string, unknown>;
  for (const key in fields) if (typeof fields[key] === 'object' && fields[key] !== null) return undefined;
  return fields;
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
