/**
 * How the router answers one interaction, whichever way it came. The first response (reply, deferral,
 * update, modal, suggestions) goes through the transport: the HTTP response body for an HTTP
 * interaction, a callback POST for one from the gateway. Everything after it goes through the
 * interaction's webhook (its token is the credential: no bot token, exempt from the global rate limit).
 * @see https://discord.com/developers/docs/interactions/receiving-and-responding#responding-to-an-interaction
 */
import {
  type APIApplicationCommandOptionChoice,
  type APIInteractionResponse,
  InteractionResponseType,
  MessageFlags,
  Routes,
} from 'discord-api-types/v10';
import type { MessagePayload, ModalPayload } from '../render/types.ts';
import type { WebhookRest } from './webhookRest.ts';

/** Sends an interaction's first response. */
export type InitialResponse = (body: APIInteractionResponse) => Promise<void>;

/** The interaction fields answering needs. */
export interface Answerable {
  id: string;
  token: string;
  application_id: string;
}

/** The first response as a callback POST (gateway interactions, and the tests' HTTP-less paths). */
export function callbackResponse(rest: WebhookRest, interaction: Answerable): InitialResponse {
  return (body) =>
    withoutToken(interaction.token, () =>
      rest.post(Routes.interactionCallback(interaction.id, interaction.token), { body, auth: false }),
    );
}

/**
 * Runs a call whose route carries the interaction token (a credential for 15 minutes): a failure is
 * rethrown with the token cut out of its URL and message, so the error boundary's log never holds it.
 */
async function withoutToken(token: string, call: () => Promise<unknown>): Promise<void> {
  try {
    await call();
  } catch (error) {
    if (error instanceof Error && token !== '') {
      const hidden = (text: string) => text.split(token).join('[interaction token]');
      error.message = hidden(error.message);
      const withUrl = error as Error & { url?: unknown };
      if (typeof withUrl.url === 'string') withUrl.url = hidden(withUrl.url);
    }
    throw error;
  }
}

/** Sends a payload, then frees what its files hold, whether it was sent or not. */
async function sending(payload: MessagePayload, send: () => Promise<void>): Promise<void> {
  try {
    await send();
  } finally {
    await payload.release?.();
  }
}

/**
 * The bodies of payloads shared between answers (deep-frozen, like a cached /whois card): made once per
 * payload, and encoded once by `responseBytes` (`sharedBytes`, filled on first use).
 */
const sharedBodies = new WeakMap<MessagePayload, [object?, object?]>();
const sharedBytes = new WeakMap<object, { type: number; bytes: Buffer } | null>();

/** A render payload as message JSON; mentions are never parsed. */
export function messageBody(payload: MessagePayload, ephemeral = false): Record<string, unknown> {
  if (!Object.isFrozen(payload) || payload.files) return newMessageBody(payload, ephemeral);
  let bodies = sharedBodies.get(payload);
  if (!bodies) {
    bodies = [];
    sharedBodies.set(payload, bodies);
  }
  const index = ephemeral ? 1 : 0;
  let body = bodies[index];
  if (!body) {
    body = Object.freeze(newMessageBody(payload, ephemeral));
    bodies[index] = body;
    sharedBytes.set(body, null);
  }
  return body as Record<string, unknown>;
}

/**
 * An interaction response as UTF-8 JSON (the body of an HTTP interaction's answer). A shared message's
 * response (see `messageBody`) is serialised and encoded once, not on every answer that reuses it.
 */
export function responseBytes(response: APIInteractionResponse): Buffer {
  const data = 'data' in response ? response.data : undefined;
  const shared = typeof data === 'object' && data !== null ? sharedBytes.get(data) : undefined;
  if (shared === undefined || Object.keys(response).length !== 2)
    return Buffer.from(JSON.stringify(response));
  if (shared?.type === response.type) return shared.bytes;
  const bytes = Buffer.from(JSON.stringify(response));
  sharedBytes.set(data as object, { type: response.type, bytes });
  return bytes;
}

function newMessageBody(payload: MessagePayload, ephemeral: boolean): Record<string, unknown> {
  return {
    content: payload.content ?? '',
    embeds: payload.embeds,
    components: payload.components,
    allowed_mentions: { parse: [] },
    ...(payload.files ? { attachments: payload.files.map((f, id) => ({ id, filename: f.name })) } : {}),
    ...(ephemeral ? { flags: MessageFlags.Ephemeral } : {}),
  };
}

/** One interaction's answers, in order; knows whether the first response was sent. */
export class Responder {
  readonly #rest: WebhookRest;
  readonly #interaction: Answerable;
  readonly #initial: InitialResponse;
  #state: 'new' | 'deferred' | 'replied';

  constructor(
    rest: WebhookRest,
    interaction: Answerable,
    initial: InitialResponse,
    /** A web replica already deferred it before handing it over (see interactionHandoff.ts). */
    state: 'new' | 'deferred' = 'new',
  ) {
    this.#rest = rest;
    this.#interaction = interaction;
    this.#initial = initial;
    this.#state = state;
  }

  /** Whether the first response was sent. */
  get answered(): boolean {
    return this.#state !== 'new';
  }

  get deferred(): boolean {
    return this.#state === 'deferred';
  }

  async #first(body: APIInteractionResponse): Promise<void> {
    await this.#initial(body);
    // Only once sent: a first response Discord refused leaves room for the error reply.
    this.#state =
      body.type === InteractionResponseType.DeferredChannelMessageWithSource ? 'deferred' : 'replied';
  }

  async reply(payload: MessagePayload, ephemeral: boolean): Promise<void> {
    if (payload.files?.length) {
      // Files go up through the webhook; the deferral keeps Discord's 3 s window meanwhile.
      await sending(payload, async () => {
        await this.defer(ephemeral);
        await this.editReply(payload);
      });
      return;
    }
    await this.#first({
      type: InteractionResponseType.ChannelMessageWithSource,
      data: messageBody(payload, ephemeral) as never,
    });
  }

  async defer(ephemeral: boolean): Promise<void> {
    await this.#first({
      type: InteractionResponseType.DeferredChannelMessageWithSource,
      ...(ephemeral ? { data: { flags: MessageFlags.Ephemeral } } : {}),
    });
  }

  /** A component's "working on it": the message stays as it is until edited. */
  async deferUpdate(): Promise<void> {
    await this.#first({ type: InteractionResponseType.DeferredMessageUpdate });
  }

  /** A component's answer: its message, edited. */
  async update(payload: MessagePayload): Promise<void> {
    await this.#first({ type: InteractionResponseType.UpdateMessage, data: messageBody(payload) as never });
  }

  async showModal(modal: ModalPayload): Promise<void> {
    await this.#first({ type: InteractionResponseType.Modal, data: modal });
  }

  async suggest(choices: APIApplicationCommandOptionChoice[]): Promise<void> {
    await this.#first({
      type: InteractionResponseType.ApplicationCommandAutocompleteResult,
      data: { choices },
    });
  }

  /** Edit the deferred reply (or the message a deferred component sits on). */
  async editReply(payload: MessagePayload): Promise<void> {
    await sending(payload, () =>
      withoutToken(this.#interaction.token, () =>
        this.#rest.patch(this.#webhookMessage('@original'), {
          body: messageBody(payload),
          auth: false,
          ...(payload.files?.length ? { files: payload.files } : {}),
        }),
      ),
    );
    this.#state = 'replied';
  }

  async deleteReply(): Promise<void> {
    await withoutToken(this.#interaction.token, () =>
      this.#rest.delete(this.#webhookMessage('@original'), { auth: false }),
    );
  }

  async followUp(payload: MessagePayload, ephemeral: boolean): Promise<void> {
    const { application_id: app, token } = this.#interaction;
    await sending(payload, () =>
      withoutToken(token, () =>
        this.#rest.post(Routes.webhook(app, token), {
          body: messageBody(payload, ephemeral),
          auth: false,
          ...(payload.files?.length ? { files: payload.files } : {}),
        }),
      ),
    );
  }

  #webhookMessage(messageId: string): `/${string}` {
    const { application_id: app, token } = this.#interaction;
    return Routes.webhookMessage(app, token, messageId);
  }
}
