/**
 * The worker's job, platform-neutral: load the conversation, run the agent
 * loop, stream its events into the chat through the platform's reply port,
 * append the turn to history. Retries continue the same reply messages (the
 * journal); a failed attempt that will be retried leaves the visible text as
 * it is, the last one says the model is unavailable.
 */
import type { ChatMessage } from "../contracts/chat-message.js";
import type { AgentEvent } from "../contracts/agent-events.js";
import { ModelError } from "../agent/model-error.js";
import type { HistorySize, HistoryStore } from "../history/history-store.js";
import type { RateGate } from "../reply/rate-gate.js";
import { showFailure, streamReply } from "../reply/reply-stream.js";
import { modelUnavailableLine, type ShowReasoning } from "../reply/reply-view.js";
import type { ReplyPortFactory } from "../contracts/reply-port.js";
import type { InboundMessage, Platform } from "../contracts/inbound-message.js";
import type { GiveUpHandler, MessageProcessor } from "../queue/message-worker.js";
import { cancelKindOf } from "../queue/cancel-bus.js";
import type { Logger } from "../observability/logger.js";
import type { Metrics } from "../observability/metrics.js";
import { pacingKey, toUserMessage } from "./user-message.js";
import { prepareTurn, preparedTurnEvents, type PreparedTurn } from "./prepared-turn.js";
import { askedByVoice, speakAnswer, type SpokenAnswers } from "./spoken-answer.js";
import type { AttachmentPreparer } from "../attachments/prepare-attachments.js";
import type { ConversationSettings } from "../settings/conversation-settings.js";
import type { SettingsStore } from "../settings/settings-store.js";

import type { ConversationContext } from "./conversation-context.js";
import type { ConversationCompactor } from "./conversation-compactor.js";

/** How one answer runs: the conversation's settings, and how to cut its history after a context-size refusal. */
export interface AgentRunOptions {
  settings?: ConversationSettings;
  shrinkHistory?: (messages: ChatMessage[], refusal: { excessTokens?: number }) => Promise<ChatMessage[] | undefined>;
}

/** Runs the agent loop on a conversation (bound to the model and tools by the caller). */
export type AgentRunner = (
  messages: ChatMessage[],
  signal: AbortSignal,
  opts?: AgentRunOptions,
) => AsyncIterable<AgentEvent>;

/** What answering needs; built once per worker process. */
export interface AnswerDeps {
  history: HistoryStore;
  agent: AgentRunner;
  ports: Partial<Record<Platform, ReplyPortFactory>>;
  gate: RateGate;
  showReasoning: ShowReasoning;
  /** Per-conversation settings, read with the history in the same round trip; without it every answer runs on the defaults. */
  settings?: Pick<SettingsStore, "readAlong" | "read">;
  /** Downloads and prepares pictures and files; without it attachments are ignored. */
  attachments?: AttachmentPreparer;
  /** Spoken answers to voice notes (TTS_BASE_URL); absent: text only. */
  speech?: SpokenAnswers;
  logger: Logger;
  metrics?: Metrics;
  now?: () => number;
  /** Token budget and summary note for each request; without it the whole stored history is sent. */
  context?: ConversationContext;
  /** Folds old turns into the summary once an answer is stored. */
  compactor?: ConversationCompactor;
  /** Applied to the whole reply before it is split into messages (the secret scrubber). */
  transformReply?: (markdown: string) => string;
}

/** Telegram shows a chat action for up to 5 s, Discord's typing for about 10 s: after this the adapter's has faded. */
export const TYPING_FADES_MS = 4000;

/** The adapter showed typing as it queued the message, moments ago: the first attempt need not show it again. */
function typingStillShown(message: InboundMessage, attempt: number, at: number): boolean {
  return message.typingOnReceipt === true && attempt === 1 && at - message.receivedAt < TYPING_FADES_MS;
}

const GENERIC_FAILURE = "⚠️ Something went wrong while answering — please try again.";

/**
 * Observes events on their way to the reply engine (metrics), without changing them; `start`
 * (load the history, start the loop) runs when the reply engine first asks for an event.
 * A round's request starts when the loop is first asked for an event, or when the
 * previous round's last tool result arrived; its first token is its first delta.
 */
async function* observed(
  start: () => Promise<AsyncIterable<AgentEvent>>,
  deps: AnswerDeps,
  seen: { text: string },
): AsyncGenerator<AgentEvent> {
  const now = deps.now ?? Date.now;
  // Started on the first pull (one generator layer per token, not two): the loop's input is ready only now.
  const events = await start();
  let roundStart = now();
  let firstTokenAt: number | undefined;
  for await (const event of events) {
    switch (event.type) {
      case "reasoning-delta":
      case "text-delta":
        if (event.type === "text-delta") seen.text += event.text;
        if (firstTokenAt === undefined) {
          firstTokenAt = now();
          deps.metrics?.modelFirstTokenSeconds.observe((firstTokenAt - roundStart) / 1000);
        }
        break;
      case "tool-result":
        deps.metrics?.toolCalls.inc({ tool: event.name, outcome: event.ok ? "ok" : "error" });
        // The next round's request goes out right after the last result.
        roundStart = now();
        break;
      case "round-finish": {
        // Generation speed: tokens after the first over the time they took (prompt evaluation excluded).
        const seconds = firstTokenAt === undefined ? 0 : (now() - firstTokenAt) / 1000;
        const tokens = event.usage?.completionTokens ?? 0;
        if (event.usage) {
          deps.metrics?.modelRequestTokens.observe({ kind: "prompt" }, event.usage.promptTokens);
          deps.metrics?.modelRequestTokens.observe({ kind: "completion" }, tokens);
        }
        if (tokens > 1 && seconds > 0) deps.metrics?.modelTokensPerSecond.observe((tokens - 1) / seconds);
        firstTokenAt = undefined;
        roundStart = now();
        // Text before a round of tool calls is a preamble; what the user keeps is the last round's answer.
        if (event.reason === "tool_calls") seen.text = "";
        break;
      }
      case "tool-call":
      case "finish":
        break;
    }
    yield event;
  }
}

/**
 * Loads what one answer's request carries and starts the loop on it: the stored history cut to the token
 * budget with the summary note (when the conversation context is there) or the whole history, the
 * conversation's settings alongside (one round trip with the history where nothing else is read), and
 * the new turn. `loaded` learns the user message as stored and the settings.
 */
async function startAgent(
  deps: AnswerDeps,
  message: InboundMessage,
  turn: PreparedTurn,
  signal: AbortSignal,
  loaded: (what: { user: ChatMessage; settings?: ConversationSettings; summaryTokens?: number }) => void,
): Promise<AsyncIterable<AgentEvent>> {
  const ck = message.conversationKey;
  if (deps.context) {
    const [conversation, settings] = await Promise.all([
      deps.context.prepare(message, signal, turn),
      deps.settings?.read(ck),
    ]);
    loaded({ user: conversation.user, summaryTokens: conversation.summaryTokens, ...(settings ? { settings } : {}) });
    return deps.agent(conversation.messages, signal, {
      ...(settings ? { settings } : {}),
      shrinkHistory: (_messages, refusal) => conversation.shrink(refusal),
    });
  }
  if (!deps.settings) return deps.agent([...(await deps.history.load(ck)), turn.request], signal);
  const withSettings = await deps.history.loadWith(ck, deps.settings.readAlong(ck));
  loaded({ user: turn.stored, settings: withSettings.also });
  return deps.agent([...withSettings.messages, turn.request], signal, { settings: withSettings.also });
}

/** Builds the queue's processor and give-up handler from the answering dependencies. */
export function createAnswerProcessor(deps: AnswerDeps): { process: MessageProcessor; onGiveUp: GiveUpHandler } {
  const now = deps.now ?? Date.now;

  const process: MessageProcessor = async (message, ctx) => {
    const factory = deps.ports[message.platform];
    if (!factory) throw new MissingPortError(message.platform);
    const port = factory(message);
    const startedAt = now();
    const log = deps.logger.child({ jobId: ctx.jobId, conversation: message.conversationKey, attempt: ctx.attempt });
    deps.metrics?.activeConversations.inc();
    try {
      let user = toUserMessage(message);
      const seen = { text: "" };
      let showReasoning = deps.showReasoning;
      // The summary's size as this answer began, when the conversation context read it (undefined: not read).
      let summaryTokens: number | undefined;
      // Attachments, history and the conversation's settings are loaded once the reply engine asks for the first
      // event, i.e. after it has sent the typing indicator and placeholder: the user sees a sign of life sooner. A
      // failed load surfaces as a stream error (retried like a model failure, the placeholder kept in the journal).
      // Settings are read once: a change made while this answer streams applies from the next one. The history
      // keeps the attachments' markers, never their bytes.
      const events = preparedTurnEvents(
        // The turn as stored is known here already: a voice note nobody could hear is stored without an answer run.
        async () => {
          const turn = await prepareTurn(message, deps.attachments, ctx.signal);
          user = turn.stored;
          return turn;
        },
        (turn) => {
          user = turn.stored;
          return observed(
            () =>
              startAgent(deps, message, turn, ctx.signal, (loaded) => {
                user = loaded.user;
                summaryTokens = loaded.summaryTokens;
                if (loaded.settings) showReasoning = loaded.settings.reasoning;
              }),
            deps,
            seen,
          );
        },
      );
      const result = await streamReply({
        port,
        chatKey: pacingKey(message),
        events,
        journal: ctx.journal,
        // Read on every render: the conversation's choice is known once the first event is pulled, before any is shown.
        get showReasoning() {
          return showReasoning;
        },
        gate: deps.gate,
        signal: ctx.signal,
        typing: !typingStillShown(message, ctx.attempt, now()),
        onFirstVisible: () =>
          deps.metrics?.firstVisibleSeconds.observe(
            { platform: message.platform },
            (now() - message.receivedAt) / 1000,
          ),
        // A retry continues this message: only the last attempt writes the failure into it.
        failureLine: (error) => (ctx.isFinalAttempt ? failureLineFor(error) : undefined),
        logger: log,
        ...(deps.transformReply ? { transform: deps.transformReply } : {}),
      });
      // Handed to another process, which continues this reply: nothing goes into history here.
      if (cancelKindOf(ctx.signal) === "shutdown") return "interrupted";
      const finish = result.finish;
      const turn: ChatMessage[] = [user, ...(finish?.messages ?? [])];
      if (!finish && result.stopped) {
        // Stopped mid-stream: keep what the user saw, so "what were you saying?" still has context.
        const partial = seen.text.trim();
        turn.push({
          role: "assistant",
          content: partial ? `${partial} … (stopped by the user)` : "(stopped before answering)",
        });
      }
      const tokens = await deps.context?.countTurn(turn);
      let size: HistorySize | undefined;
      const stored = await deps.history.append(message.conversationKey, turn, {
        askedAt: message.receivedAt,
        ...(tokens ? { tokens } : {}),
        onStored: (told) => (size = told),
        ...(summaryTokens === 0 ? { summary: false } : {}),
      });
      if (!stored) log.info("conversation was reset while answering: turn not stored");
      await ctx.markAnswered();
      // A voice note is answered with voice too, once the text is final (spoken-answer.ts; never throws).
      if (deps.speech && finish?.reason === "stop" && finish.rounds > 0 && askedByVoice(message))
        await speakAnswer(deps.speech, port, deps.transformReply?.(finish.text) ?? finish.text, ctx.signal);
      // The answer is delivered and stored: only now may old turns be folded into the summary. Not under the
      // job's signal: a /stop of this answer must not cancel the fold (a failed fold costs nothing, the model's timeout bounds it).
      if (stored) {
        await deps.compactor?.afterAnswer(message.conversationKey, {
          shared: message.chatType !== "private",
          ...(size ? { stored: size } : {}),
          ...(summaryTokens !== undefined ? { summaryTokens } : {}),
        });
      }
      // The job's outcome line (info) is written where the queue runtime announces outcomes (observability/job-outcomes.ts).
      log.debug(
        {
          finish: result.stopped ? "stopped" : (finish?.reason ?? "unknown"),
          rounds: finish?.rounds,
          messages: result.messageIds.length,
          ms: now() - startedAt,
        },
        "answered",
      );
      return result.stopped ? "stopped" : "answered";
    } catch (error) {
      // Retrying cannot help (context too long, bad request): the runtime gives up at once (the error says
      // `retryable: false`) and the give-up handler says why, in the same message.
      if (error instanceof ModelError && !error.retryable) log.warn({ err: error }, "model refused the request");
      throw error;
    } finally {
      deps.metrics?.activeConversations.dec();
    }
  };

  const onGiveUp: GiveUpHandler = async (message, ctx, error) => {
    deps.logger.debug({ jobId: ctx.jobId, err: error }, "giving up on message");
    const factory = deps.ports[message.platform];
    if (!factory) return;
    await showFailure(factory(message), ctx.journal, failureLineFor(error), {
      gate: deps.gate,
      chatKey: pacingKey(message),
    });
  };

  return { process, onGiveUp };
}

/** This worker has no reply port for the message's platform: no attempt can answer it. */
export class MissingPortError extends Error {
  override readonly name = "MissingPortError";
  readonly retryable = false;
  constructor(platform: string) {
    super(`no reply port for platform ${platform} in this worker`);
  }
}

/** `MODEL_VISION=on` in front of a model that takes no pictures: what to change. */
export const IMAGES_UNSUPPORTED_LINE =
  "🖼️ The model server does not take pictures. Send the question as text, or run a vision model (README: Pictures and files); with `MODEL_VISION=auto` I ask the server first.";

/** A short, useful line for the user; details stay in the log. */
export function failureLineFor(error: unknown): string {
  if (error instanceof ModelError) {
    if (error.code === "context-exceeded")
      return "⚠️ This conversation is too long for the model — send /reset to start over.";
    if (error.code === "images-unsupported") return IMAGES_UNSUPPORTED_LINE;
    // A refusal no retry gets past (bad key, bad request) is ours to fix, not the user's to wait out.
    return error.retryable ? modelUnavailableLine() : GENERIC_FAILURE;
  }
  // Anything else that says no retry can help (a bug, a payload no attempt can answer).
  if ((error as { retryable?: unknown } | null | undefined)?.retryable === false) return GENERIC_FAILURE;
  return modelUnavailableLine();
}
