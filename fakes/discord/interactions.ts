import type { APIMessage, APIMessageInteractionMetadata, APIUser, MessageFlags } from 'discord-api-types/v10';
import { InteractionResponseType, InteractionType, type MessageType } from 'discord-api-types/v10';
import { type Answer, apiError, noContent } from './http.ts';
import {
  asRecord,
  createMessage,
  editMessage,
  MESSAGE_FLAG_EPHEMERAL,
  MESSAGE_FLAG_LOADING,
  type MessageTarget,
  type Payload,
  type UploadedFile,
  withoutLoading,
} from './messages.ts';
import type { FakeDiscordState, FakeMessage } from './state.ts';
import { validateMessagePayload } from './validate.ts';

export interface InteractionResult {
  interactionId: string;
  /** What the bot POSTed to /interactions/{id}/{token}/callback, in order. */
  // biome-ignore lint/suspicious/noExplicitAny: raw JSON whose shape depends on the callback type; tests read it freely.
  callbacks: { type: number; data?: any }[];
  /**
   * The visible response: the type-4 reply, the deferred reply once edited (or replaced by the first
   * follow-up, as Discord does), or for components the message after a type-7 update or an edit.
   * Null for a modal. Keeps following later edits of @original.
   */
  message: FakeMessage | null;
  /** Follow-up messages; keeps growing after the result resolves. */
  followUps: FakeMessage[];
  ephemeral: boolean;
  /** ms from dispatch to the first callback. */
  ackMs: number;
  /** ms from dispatch to the response being complete. */
  doneMs: number;
  /** How the interaction went to an Interactions Endpoint URL; absent when it went over the gateway. */
  delivery?: HttpDelivery;
}

/** One interaction POSTed to the bot's Interactions Endpoint URL, and what came back. */
export interface HttpDelivery {
  interactionId: string;
  /** 'ping' for a validation PING. */
  kind: TrackInput['kind'] | 'ping';
  /** The HTTP status the endpoint answered; null when no answer came in time (or the connection failed). */
  status: number | null;
  /** The `X-Served-By` response header, if any (which replica answered behind a load balancer). */
  servedBy: string | null;
  /** ms from the POST to the whole response body. */
  ms: number;
  /** Why Discord would show "This interaction failed"; null when the response was accepted. */
  error: string | null;
  /** What was POSTed, byte for byte (body and headers), so a test can replay a captured delivery. */
  sent?: { body: string; headers: Record<string, string> };
}

/** 'ack' resolves at the first callback; 'done' (default) once the visible response is complete. */
export type WaitUntil = 'ack' | 'done';

export interface TrackInput {
  readonly id: string;
  readonly token: string;
  readonly kind: 'command' | 'component' | 'modal' | 'autocomplete';
  /** For a modal submit: the interaction that opened the modal. */
  readonly openedBy: string | null;
  readonly user: APIUser;
  readonly channelId: string;
  readonly guildId: string | null;
  /** The message a clicked component sits on. */
  readonly sourceMessageId: string | null;
  readonly commandName: string;
  readonly messageType: MessageType;
  readonly until: WaitUntil;
  readonly timeoutMs: number;
  /** The interaction's `attachment_size_limit`: a file above it in any answer is refused with 413. */
  readonly attachmentSizeLimit: number;
}

type Stage =
  | 'waiting'
  | 'replied'
  | 'deferred-reply'
  | 'deferred-update'
  | 'updated'
  | 'modal'
  | 'autocompleted';

interface Tracked {
  readonly input: TrackInput;
  readonly dispatchedAt: number;
  readonly result: InteractionResult;
  stage: Stage;
  originalMessageId: string | null;
  settled: boolean;
  resolve(result: InteractionResult): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout | undefined;
}

export interface TrackerContext {
  readonly state: FakeDiscordState;
  readonly origin: string;
  readonly applicationId: string;
  /** Discord drops callbacks that come later than 3 s after the interaction. */
  readonly ackDeadlineMs: number;
}

const INTERACTION_TYPES = {
  command: InteractionType.ApplicationCommand,
  component: InteractionType.MessageComponent,
  modal: InteractionType.ModalSubmit,
  autocomplete: InteractionType.ApplicationCommandAutocomplete,
} as const;

/** Discord's limits on autocomplete choices. */
export const MAX_AUTOCOMPLETE_CHOICES = 25;
const MAX_CHOICE_NAME = 100;
const MAX_CHOICE_STRING_VALUE = 100;

const UNKNOWN_INTERACTION = apiError(404, 10_062, 'Unknown interaction');
const UNKNOWN_WEBHOOK = apiError(404, 10_015, 'Unknown Webhook');
const UNKNOWN_MESSAGE = apiError(404, 10_008, 'Unknown Message');
const TOO_LARGE = apiError(413, 40_005, 'Request entity too large');

/**
 * Follows each played interaction from dispatch to a complete response, and answers the interaction
 * callback and webhook routes the way Discord does.
 * @see https://discord.com/developers/docs/interactions/receiving-and-responding
 */
export class InteractionTracker {
  readonly #ctx: TrackerContext;
  readonly #byId = new Map<string, Tracked>();
  readonly #byToken = new Map<string, Tracked>();

  constructor(ctx: TrackerContext) {
    this.#ctx = ctx;
  }

  /** Starts following an interaction about to be dispatched; resolves per `until`, rejects on timeout. */
  track(input: TrackInput): Promise<InteractionResult> {
    return new Promise<InteractionResult>((resolve, reject) => {
      const tracked: Tracked = {
        input,
        dispatchedAt: performance.now(),
        result: {
          interactionId: input.id,
          callbacks: [],
          message: null,
          followUps: [],
          ephemeral: false,
          ackMs: -1,
          doneMs: -1,
        },
        stage: 'waiting',
        originalMessageId: null,
        settled: false,
        resolve,
        reject,
        timer: undefined,
      };
      tracked.timer = setTimeout(() => {
        this.#fail(tracked, new Error(describeTimeout(tracked)));
      }, input.timeoutMs);
      this.#byId.set(input.id, tracked);
      this.#byToken.set(input.token, tracked);
    });
  }

  /** The opening interaction and the modal it showed, if `interactionId` answered with a modal. */
  openedModal(interactionId: string): { input: TrackInput; modal: Payload } | null {
    const tracked = this.#byId.get(interactionId);
    const callback = tracked?.result.callbacks.find((c) => c.type === InteractionResponseType.Modal);
    return tracked && callback ? { input: tracked.input, modal: asRecord(callback.data) ?? {} } : null;
  }

  /** Attaches how the interaction went over HTTP to its result (before its response is applied). */
  recordDelivery(delivery: HttpDelivery): void {
    const tracked = this.#byId.get(delivery.interactionId);
    if (tracked) tracked.result.delivery = delivery;
  }

  /** Rejects an interaction that could not be dispatched. */
  abandon(id: string, error: Error): void {
    const tracked = this.#byId.get(id);
    if (tracked) this.#fail(tracked, error);
  }

  /** Rejects everything still pending (the fake is closing). */
  closeAll(): void {
    for (const tracked of this.#byId.values()) this.#fail(tracked, new Error('the fake Discord was closed'));
  }

  /** `POST /interactions/{id}/{token}/callback`. */
  callback(id: string, token: string, query: URLSearchParams, body: unknown, files: UploadedFile[]): Answer {
    const tracked = this.#byId.get(id);
    if (!tracked || tracked.input.token !== token) return UNKNOWN_INTERACTION;
    if (tracked.stage !== 'waiting')
      return apiError(400, 40_060, 'Interaction has already been acknowledged.');
    if (performance.now() - tracked.dispatchedAt > this.#ctx.ackDeadlineMs) return UNKNOWN_INTERACTION;
    if (tooLarge(tracked, files)) return TOO_LARGE;
    const request = asRecord(body) ?? {};
    const type = Number(request.type);
    const data = asRecord(request.data) ?? {};
    const stage = this.#acknowledge(tracked, type, data, files);
    if (typeof stage !== 'string') return stage;
    tracked.stage = stage;
    tracked.result.callbacks.push(request.data === undefined ? { type } : { type, data: request.data });
    tracked.result.ackMs = performance.now() - tracked.dispatchedAt;
    const complete =
      stage === 'replied' || stage === 'updated' || stage === 'modal' || stage === 'autocompleted';
    if (tracked.input.until === 'ack' || complete) {
      this.#settle(tracked);
    }
    if (query.get('with_response') !== 'true') return noContent;
    const message = tracked.originalMessageId
      ? this.#ctx.state.messages.get(tracked.originalMessageId)
      : undefined;
    return {
      status: 200,
      body: {
        interaction: {
          id,
          type: INTERACTION_TYPES[tracked.input.kind],
          response_message_id: message?.id,
          response_message_loading: stage === 'deferred-reply',
          response_message_ephemeral: tracked.result.ephemeral,
        },
        resource: { type, ...(message ? { message } : {}) },
      },
    };
  }

  /** `POST /webhooks/{app}/{token}`: a follow-up (or, after a deferred reply, the reply itself). */
  followUp(
    applicationId: string,
    token: string,
    query: URLSearchParams,
    body: unknown,
    files: UploadedFile[],
  ): Answer {
    const tracked = this.#forWebhook(applicationId, token);
    if (!tracked || tracked.stage === 'waiting') return UNKNOWN_WEBHOOK;
    if (tooLarge(tracked, files)) return TOO_LARGE;
    const payload = asRecord(body) ?? {};
    const invalid = validateMessagePayload(payload, { isCreate: true, hasFiles: files.length > 0 });
    if (invalid) return invalid;
    let message: FakeMessage;
    const original = this.#original(tracked);
    if (
      tracked.stage === 'deferred-reply' &&
      original &&
      (Number(original.flags ?? 0) & MESSAGE_FLAG_LOADING) !== 0
    ) {
      // The first follow-up to a deferred reply fills the "thinking…" message, keeping the deferral's flags.
      message = editMessage(this.#target(tracked), withoutLoading(original), payload, files);
      tracked.result.message = message;
    } else {
      message = createMessage(
        this.#target(tracked),
        this.#ctx.state.botUser,
        payload,
        files,
        this.#messageExtras(tracked, 0),
      );
      tracked.result.followUps.push(message);
    }
    if (tracked.stage === 'deferred-reply' || tracked.stage === 'deferred-update') this.#settle(tracked);
    return query.get('wait') === 'false' ? noContent : { status: 200, body: message };
  }

  /** `GET`, `PATCH` and `DELETE /webhooks/{app}/{token}/messages/{id|@original}`. */
  webhookMessage(
    method: string,
    applicationId: string,
    token: string,
    messageId: string,
    body: unknown,
    files: UploadedFile[],
  ): Answer {
    const tracked = this.#forWebhook(applicationId, token);
    if (!tracked) return UNKNOWN_WEBHOOK;
    const isOriginal = messageId === '@original' || messageId === tracked.originalMessageId;
    const message = isOriginal
      ? this.#original(tracked)
      : tracked.result.followUps.find((m) => m.id === messageId);
    const current = message ? this.#ctx.state.messages.get(message.id) : undefined;
    if (!current) return UNKNOWN_MESSAGE;
    if (method === 'GET') return { status: 200, body: current };
    if (method === 'DELETE') {
      this.#ctx.state.messages.delete(current.id);
      if (isOriginal) tracked.result.message = null;
      else tracked.result.followUps = tracked.result.followUps.filter((m) => m.id !== current.id);
      return noContent;
    }
    if (tooLarge(tracked, files)) return TOO_LARGE;
    const payload = asRecord(body) ?? {};
    const invalid = validateMessagePayload(payload, { isCreate: false, hasFiles: files.length > 0 });
    if (invalid) return invalid;
    const edited = editMessage(
      this.#target(tracked),
      isOriginal ? withoutLoading(current) : current,
      payload,
      files,
    );
    if (isOriginal) {
      tracked.result.message = edited;
      if (tracked.stage === 'deferred-reply' || tracked.stage === 'deferred-update') this.#settle(tracked);
    } else {
      tracked.result.followUps = tracked.result.followUps.map((m) => (m.id === edited.id ? edited : m));
    }
    return { status: 200, body: edited };
  }

  /** Applies a callback; answers the new stage, or an error answer. */
  #acknowledge(tracked: Tracked, type: number, data: Payload, files: UploadedFile[]): Stage | Answer {
    // Components, and modals opened from one, may update the message the component sits on.
    const onMessage = tracked.input.sourceMessageId !== null;
    // An autocomplete interaction takes choices and nothing else; nothing else takes choices.
    if (
      (tracked.input.kind === 'autocomplete') !==
      (type === InteractionResponseType.ApplicationCommandAutocompleteResult)
    )
      return invalidCallbackType(type);
    switch (type) {
      case InteractionResponseType.ApplicationCommandAutocompleteResult:
        return invalidChoices(data) ?? 'autocompleted';
      case InteractionResponseType.ChannelMessageWithSource: {
        const invalid = validateMessagePayload(data, { isCreate: true, hasFiles: files.length > 0 });
        if (invalid) return invalid;
        const message = createMessage(
          this.#target(tracked),
          this.#ctx.state.botUser,
          data,
          files,
          this.#messageExtras(tracked, 0),
        );
        this.#setOriginal(tracked, message);
        return 'replied';
      }
      case InteractionResponseType.DeferredChannelMessageWithSource: {
        const flags = (Number(data.flags ?? 0) & MESSAGE_FLAG_EPHEMERAL) | MESSAGE_FLAG_LOADING;
        const message = createMessage(
          this.#target(tracked),
          this.#ctx.state.botUser,
          {},
          [],
          this.#messageExtras(tracked, flags),
        );
        this.#setOriginal(tracked, message);
        tracked.result.message = null;
        return 'deferred-reply';
      }
      case InteractionResponseType.DeferredMessageUpdate:
      case InteractionResponseType.UpdateMessage: {
        const source = tracked.input.sourceMessageId
          ? this.#ctx.state.messages.get(tracked.input.sourceMessageId)
          : undefined;
        if (!onMessage || !source) return invalidCallbackType(type);
        if (type === InteractionResponseType.DeferredMessageUpdate) {
          this.#setOriginal(tracked, source);
          tracked.result.message = null;
          return 'deferred-update';
        }
        const invalid = validateMessagePayload(data, { isCreate: false, hasFiles: files.length > 0 });
        if (invalid) return invalid;
        this.#setOriginal(tracked, editMessage(this.#target(tracked), source, data, files));
        return 'updated';
      }
      case InteractionResponseType.Modal: {
        if (tracked.input.kind === 'modal') return invalidCallbackType(type);
        if (typeof data.custom_id !== 'string' || typeof data.title !== 'string')
          return invalidCallbackType(type);
        return 'modal';
      }
      default:
        return invalidCallbackType(type);
    }
  }

  #setOriginal(tracked: Tracked, message: FakeMessage): void {
    tracked.originalMessageId = message.id;
    tracked.result.message = message;
    tracked.result.ephemeral = (Number(message.flags ?? 0) & MESSAGE_FLAG_EPHEMERAL) !== 0;
  }

  #original(tracked: Tracked): FakeMessage | undefined {
    return tracked.originalMessageId ? this.#ctx.state.messages.get(tracked.originalMessageId) : undefined;
  }

  #forWebhook(applicationId: string, token: string): Tracked | undefined {
    return applicationId === this.#ctx.applicationId ? this.#byToken.get(token) : undefined;
  }

  #target(tracked: Tracked): MessageTarget {
    return {
      state: this.#ctx.state,
      origin: this.#ctx.origin,
      channelId: tracked.input.channelId,
      guildId: tracked.input.guildId,
    };
  }

  #messageExtras(tracked: Tracked, flags: number): Partial<APIMessage> {
    const { input } = tracked;
    return {
      type: input.messageType,
      flags: flags as MessageFlags,
      webhook_id: this.#ctx.applicationId,
      application_id: this.#ctx.applicationId,
      interaction_metadata: this.#metadata(input),
    };
  }

  #metadata(input: TrackInput): APIMessageInteractionMetadata {
    const base = { id: input.id, user: input.user, authorizing_integration_owners: {} };
    if (input.kind === 'command') return { ...base, type: InteractionType.ApplicationCommand };
    if (input.kind === 'component') {
      return {
        ...base,
        type: InteractionType.MessageComponent,
        interacted_message_id: input.sourceMessageId ?? '0',
      };
    }
    const opener = input.openedBy ? this.#byId.get(input.openedBy)?.input : undefined;
    const triggering =
      opener?.kind === 'component'
        ? {
            ...base,
            id: opener.id,
            type: InteractionType.MessageComponent as const,
            interacted_message_id: opener.sourceMessageId ?? '0',
          }
        : { ...base, id: opener?.id ?? '0', type: InteractionType.ApplicationCommand as const };
    return { ...base, type: InteractionType.ModalSubmit, triggering_interaction_metadata: triggering };
  }

  #settle(tracked: Tracked): void {
    if (tracked.settled) return;
    tracked.settled = true;
    clearTimeout(tracked.timer);
    tracked.result.doneMs = performance.now() - tracked.dispatchedAt;
    tracked.resolve(tracked.result);
  }

  #fail(tracked: Tracked, error: Error): void {
    if (tracked.settled) return;
    tracked.settled = true;
    clearTimeout(tracked.timer);
    tracked.reject(error);
  }
}

/** Whether a file is above the interaction's attachment limit (Discord answers 413, 40005). */
function tooLarge(tracked: Tracked, files: UploadedFile[]): boolean {
  return files.some((file) => file.data.byteLength > tracked.input.attachmentSizeLimit);
}

/** A 400 like Discord's when the choices break its limits, or null when they are fine. */
function invalidChoices(data: Payload): Answer | null {
  const choices = data.choices;
  if (!Array.isArray(choices)) return apiError(400, 50_035, 'Invalid Form Body: data.choices is required');
  if (choices.length > MAX_AUTOCOMPLETE_CHOICES)
    return apiError(400, 50_035, `Invalid Form Body: at most ${MAX_AUTOCOMPLETE_CHOICES} choices`);
  for (const choice of choices) {
    const { name, value } = (asRecord(choice) ?? {}) as { name?: unknown; value?: unknown };
    const nameOk = typeof name === 'string' && name.length >= 1 && name.length <= MAX_CHOICE_NAME;
    const valueOk =
      typeof value === 'number' || (typeof value === 'string' && value.length <= MAX_CHOICE_STRING_VALUE);
    if (!nameOk || !valueOk)
      return apiError(
        400,
        50_035,
        'Invalid Form Body: a choice name is 1-100 characters, a value at most 100',
      );
  }
  return null;
}

function invalidCallbackType(type: number): Answer {
  return {
    status: 400,
    body: {
      message: 'Invalid Form Body',
      code: 50_035,
      errors: {
        type: {
          _errors: [
            {
              code: 'INTERACTION_CALLBACK_TYPE_INVALID',
              message: `Invalid interaction callback type ${type} here.`,
            },
          ],
        },
      },
    },
  };
}

function describeTimeout(tracked: Tracked): string {
  const { input, result, stage } = tracked;
  const seen = result.callbacks.map((callback) => callback.type).join(', ') || 'none';
  const what = `${input.kind} "${input.commandName}"`;
  return `${what}: no complete response within ${input.timeoutMs} ms (stage ${stage}; callback types seen: ${seen}; follow-ups: ${result.followUps.length})`;
}
