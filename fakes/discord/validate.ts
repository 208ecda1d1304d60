import { asRecord, type Payload } from './messages.ts';

/** One field problem, at a JSON path, in Discord's `Invalid Form Body` vocabulary. */
export interface FieldError {
  readonly path: (string | number)[];
  readonly code: string;
  readonly message: string;
}

/** A Discord-style error answer: HTTP status plus JSON body. */
export interface ApiError {
  readonly status: number;
  readonly body: { message: string; code: number; errors?: unknown };
}

const EMBED_TOTAL_MAX = 6000;
const URL_SCHEMES = ['http:', 'https:'];
const IMAGE_URL_SCHEMES = ['http:', 'https:', 'attachment:'];
const COMPONENTS_V2_FLAG = 32_768;

/**
 * Checks a message payload against Discord's documented limits (content, embeds, classic components).
 * Answers like Discord: 50006 for an empty message, 50035 `Invalid Form Body` with nested `errors`.
 */
export function validateMessagePayload(
  payload: Payload,
  options: { isCreate: boolean; hasFiles: boolean },
): ApiError | null {
  const problems: FieldError[] = [];
  const content = typeof payload.content === 'string' ? payload.content : '';
  maxLength(problems, ['content'], content, 2000);
  const embeds = Array.isArray(payload.embeds) ? payload.embeds : [];
  if (embeds.length > 10) problems.push(tooMany(['embeds'], 10));
  embeds.forEach((embed, index) => {
    checkEmbed(problems, ['embeds', index], asRecord(embed) ?? {});
  });
  const total = embeds.reduce<number>((sum, embed) => sum + embedTextLength(asRecord(embed) ?? {}), 0);
  if (total > EMBED_TOTAL_MAX) {
    problems.push({
      path: ['embeds'],
      code: 'MAX_EMBED_SIZE_EXCEEDED',
      message: `Embed size exceeds maximum size of ${EMBED_TOTAL_MAX}`,
    });
  }
  const components = Array.isArray(payload.components) ? payload.components : [];
  if ((Number(payload.flags ?? 0) & COMPONENTS_V2_FLAG) === 0) checkActionRows(problems, components);
  if (problems.length > 0) return invalidFormBody(problems);
  const empty =
    content.trim() === '' &&
    embeds.length === 0 &&
    components.length === 0 &&
    !options.hasFiles &&
    !payload.poll &&
    !(Array.isArray(payload.sticker_ids) && payload.sticker_ids.length > 0);
  if (options.isCreate && empty) {
    return { status: 400, body: { message: 'Cannot send an empty message', code: 50006 } };
  }
  return null;
}

/** Builds the 50035 answer, nesting each problem under its path with `_errors`, as Discord does. */
export function invalidFormBody(problems: FieldError[]): ApiError {
  const errors: Record<string, unknown> = {};
  for (const problem of problems) {
    let node = errors;
    for (const key of problem.path) {
      const name = String(key);
      node[name] ??= {};
      node = node[name] as Record<string, unknown>;
    }
    node._errors ??= [];
    (node._errors as unknown[]).push({ code: problem.code, message: problem.message });
  }
  return { status: 400, body: { message: 'Invalid Form Body', code: 50_035, errors } };
}

function checkEmbed(problems: FieldError[], path: (string | number)[], embed: Payload): void {
  maxLength(problems, [...path, 'title'], embed.title, 256);
  maxLength(problems, [...path, 'description'], embed.description, 4096);
  checkUrl(problems, [...path, 'url'], embed.url, URL_SCHEMES);
  if (embed.color !== undefined && embed.color !== null) {
    const color = Number(embed.color);
    if (!Number.isInteger(color) || color < 0 || color > 0xff_ffff) {
      problems.push({
        path: [...path, 'color'],
        code: 'NUMBER_TYPE_MAX',
        message: 'int value should be <= 16777215.',
      });
    }
  }
  const author = asRecord(embed.author);
  if (author) {
    required(problems, [...path, 'author', 'name'], author.name);
    maxLength(problems, [...path, 'author', 'name'], author.name, 256);
    checkUrl(problems, [...path, 'author', 'url'], author.url, URL_SCHEMES);
    checkUrl(problems, [...path, 'author', 'icon_url'], author.icon_url, IMAGE_URL_SCHEMES);
  }
  const footer = asRecord(embed.footer);
  if (footer) {
    required(problems, [...path, 'footer', 'text'], footer.text);
    maxLength(problems, [...path, 'footer', 'text'], footer.text, 2048);
    checkUrl(problems, [...path, 'footer', 'icon_url'], footer.icon_url, IMAGE_URL_SCHEMES);
  }
  for (const key of ['image', 'thumbnail'] as const) {
    const media = asRecord(embed[key]);
    if (media) checkUrl(problems, [...path, key, 'url'], media.url, IMAGE_URL_SCHEMES);
  }
  const fields = Array.isArray(embed.fields) ? embed.fields : [];
  if (fields.length > 25) problems.push(tooMany([...path, 'fields'], 25));
  fields.forEach((raw, index) => {
    const field = asRecord(raw) ?? {};
    required(problems, [...path, 'fields', index, 'name'], field.name);
    maxLength(problems, [...path, 'fields', index, 'name'], field.name, 256);
    required(problems, [...path, 'fields', index, 'value'], field.value);
    maxLength(problems, [...path, 'fields', index, 'value'], field.value, 1024);
  });
}

function embedTextLength(embed: Payload): number {
  const text = (value: unknown) => (typeof value === 'string' ? value.length : 0);
  const fields = Array.isArray(embed.fields) ? embed.fields : [];
  return (
    text(embed.title) +
    text(embed.description) +
    text(asRecord(embed.author)?.name) +
    text(asRecord(embed.footer)?.text) +
    fields.reduce<number>((sum, raw) => sum + text(asRecord(raw)?.name) + text(asRecord(raw)?.value), 0)
  );
}

function checkActionRows(problems: FieldError[], rows: unknown[]): void {
  if (rows.length > 5) problems.push(tooMany(['components'], 5));
  const customIds = new Set<string>();
  rows.forEach((raw, rowIndex) => {
    const row = asRecord(raw) ?? {};
    const children = Array.isArray(row.components) ? row.components : [];
    const path = ['components', rowIndex, 'components'];
    if (row.type !== 1) {
      problems.push({
        path: ['components', rowIndex, 'type'],
        code: 'UNION_TYPE_CHOICES',
        message: 'Value must be an action row.',
      });
      return;
    }
    if (children.length === 0)
      problems.push({ path, code: 'BASE_TYPE_MIN_LENGTH', message: 'Must be 1 or more in length.' });
    const selects = children.filter((child) => asRecord(child)?.type !== 2);
    if (children.length > 5 || (selects.length > 0 && children.length > 1)) {
      problems.push({
        path,
        code: 'COMPONENT_LAYOUT_WIDTH_EXCEEDED',
        message: 'The specified component exceeds the maximum width',
      });
    }
    children.forEach((child, index) => {
      checkComponent(problems, [...path, index], asRecord(child) ?? {}, customIds);
    });
  });
}

function checkComponent(
  problems: FieldError[],
  path: (string | number)[],
  component: Payload,
  customIds: Set<string>,
): void {
  const isLink = component.type === 2 && (component.style === 5 || component.style === 6);
  if (component.type === 2 && component.style === 5) {
    checkUrl(problems, [...path, 'url'], component.url, ['http:', 'https:', 'discord:']);
    required(problems, [...path, 'url'], component.url);
  }
  if (!isLink) {
    required(problems, [...path, 'custom_id'], component.custom_id);
    maxLength(problems, [...path, 'custom_id'], component.custom_id, 100);
    if (typeof component.custom_id === 'string') {
      if (customIds.has(component.custom_id)) {
        problems.push({
          path: [...path, 'custom_id'],
          code: 'COMPONENT_CUSTOM_ID_DUPLICATED',
          message: 'Component custom id cannot be duplicated',
        });
      }
      customIds.add(component.custom_id);
    }
  }
  if (component.type === 2) maxLength(problems, [...path, 'label'], component.label, 80);
  if (component.type !== 2) maxLength(problems, [...path, 'placeholder'], component.placeholder, 150);
  if (component.type === 3) {
    const options = Array.isArray(component.options) ? component.options : [];
    if (options.length === 0)
      problems.push({
        path: [...path, 'options'],
        code: 'BASE_TYPE_MIN_LENGTH',
        message: 'Must be 1 or more in length.',
      });
    if (options.length > 25) problems.push(tooMany([...path, 'options'], 25));
    options.forEach((raw, index) => {
      const option = asRecord(raw) ?? {};
      for (const key of ['label', 'value'] as const) {
        required(problems, [...path, 'options', index, key], option[key]);
        maxLength(problems, [...path, 'options', index, key], option[key], 100);
      }
      maxLength(problems, [...path, 'options', index, 'description'], option.description, 100);
    });
  }
}

function required(problems: FieldError[], path: (string | number)[], value: unknown): void {
  if (typeof value !== 'string' || value.length === 0) {
    problems.push({ path, code: 'BASE_TYPE_REQUIRED', message: 'This field is required' });
  }
}

function maxLength(problems: FieldError[], path: (string | number)[], value: unknown, max: number): void {
  if (typeof value === 'string' && value.length > max) {
    problems.push({ path, code: 'BASE_TYPE_MAX_LENGTH', message: `Must be ${max} or fewer in length.` });
  }
}

function tooMany(path: (string | number)[], max: number): FieldError {
  return { path, code: 'BASE_TYPE_MAX_LENGTH', message: `Must be ${max} or fewer in length.` };
}

function checkUrl(
  problems: FieldError[],
  path: (string | number)[],
  value: unknown,
  schemes: string[],
): void {
  if (value === undefined || value === null) return;
  const scheme =
    typeof value === 'string' ? /^([a-z][a-z0-9+.-]*:)/i.exec(value)?.[1]?.toLowerCase() : undefined;
  if (!scheme || !schemes.includes(scheme)) {
    const allowed = schemes.map((s) => `'${s.slice(0, -1)}'`).join(', ');
    problems.push({
      path,
      code: 'URL_TYPE_INVALID_SCHEME',
      message: `Scheme "${scheme?.slice(0, -1) ?? ''}" is not supported. Scheme must be one of (${allowed}).`,
    });
  }
}
