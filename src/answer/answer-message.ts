/**
 * The worker's job, platform-neutral, as one turn in steps: a sign of life, load (attachments, history, summary,
 * settings), run the agent, deliver its events through the platform's reply port, store the turn, fold old turns.
 * Retries continue the same reply messages (the journal); only the last attempt writes a failure into them.
 */
import type { ChatMessage } from "../contracts/chat-message.js";
import type { AgentEvent, Usage } from "../contracts/agent-events.js";
import { ModelError } from "../agent/model-error.js";
import type { AgentInput } from "../agent/run-agent.js";
import type { HistorySize, HistoryStore } from "../history/history-store.js";
import type { JobContext } from "../queue/job-context.js";
import type { RateGate } from "../reply/rate-gate.js";
import { showFailure, streamReply } from "../reply/reply-stream.js";
import { modelUnavailableLine, type ShowReasoning } from "../reply/reply-view.js";
import type { ReplyPort, ReplyPortFactory } from "../contracts/reply-port.js";
import type { InboundMessage, Platform } from "../contracts/inbound-message.js";
import type { GiveUpHandler, MessageProcessor } from "../queue/message-worker.js";
import { cancelKindOf } from "../queue/cancel-bus.js";
import type { Logger } from "../observability/logger.js";
import type { Metrics } from "../observability/metrics.js";
import { pacingKey, toUserMessage } from "./user-message.js";
import { prepareTurn } from "./prepared-turn.js";
import { speakAnswer, wantsSpokenAnswer, type SpokenAnswers } from "./spoken-answer.js";
import type { AttachmentPreparer } from "../attachments/prepare-attachments.js";
import type { ConversationSettings } from "../settings/conversation-settings.js";
import type { ToolConversation } from "../contracts/tool-conversation.js";
import type { SettingsStore } from "../settings/settings-store.js";

import type { ConversationContext } from "./conversation-context.js";
import type { ConversationCompactor } from "./conversation-compactor.js";

/** How one answer runs: the conversation's settings, how to cut its history after a refusal, its chat (for tools). */
export interface AgentRunOptions {
  settings?: ConversationSettings;
  shrinkHistory?: AgentInput["shrinkHistory"];
  conversation?: AgentInput["conversation"];
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

/** What the reply engine reports once the reply is delivered. */
type Delivered = Awaited<ReturnType<typeof streamReply>>;

/** What the turn loaded before the agent runs: the request, and what storing the turn needs. */
interface LoadedTurn {
  /** Lines about the attachments, shown above the answer. */
  notices: string[];
  /** False when nothing is left for the model (a voice note nobody could hear): the notices are the answer. */
  answerable: boolean;
  /** What the model is sent: the (summarised, budgeted) history and the new message, oldest first. */
  messages: ChatMessage[];
  /** The new message as history keeps it (attachment markers, never their bytes). */
  user: ChatMessage;
  /** The conversation's settings, read once: a change made while this answer streams applies from the next one. */
  settings?: ConversationSettings;
  /** The summary's size as this answer began, when the conversation context read it. */
  summaryTokens?: number;
  /** The same history cut harder, after a context-size refusal. */
  shrinkHistory?: AgentRunOptions["shrinkHistory"];
}

/** Step 2, load: the attachments, then the history (budgeted when there is a context, else whole) and settings. */
async function loadTurn(deps: AnswerDeps, message: InboundMessage, signal: AbortSignal): Promise<LoadedTurn> {
  const turn = await prepareTurn(message, deps.attachments, signal);
  const ck = message.conversationKey;
  const notices = turn.notices;
  if (!turn.answerable) return { notices, answerable: false, messages: [], user: turn.stored };
  if (deps.context) {
    const [conversation, settings] = await Promise.all([
      deps.context.prepare(message, signal, turn),
      deps.settings?.read(ck),
    ]);
    return {
      notices,
      answerable: true,
      messages: conversation.messages,
      user: conversation.user,
      summaryTokens: conversation.summaryTokens,
      ...(settings ? { settings } : {}),
      shrinkHistory: (_messages, refusal) => conversation.shrink(refusal),
    };
  }
  // The settings in the history's round trip, where nothing else is read.
  const { messages, also: settings } = deps.settings
    ? await deps.history.loadWith(ck, deps.settings.readAlong(ck))
    : { messages: await deps.history.load(ck), also: undefined };
  return { notices, answerable: true, messages: [...messages, turn.request], user: turn.stored, settings };
}

/** The agent's events on their way to the chat, and the answer text the user has seen so far. */
interface AgentRun {
  events: AsyncIterable<AgentEvent>;
  /** The last round's text so far (a stopped answer keeps it in history). */
  textSoFar(): string;
}

/**
 * Step 3, run the agent: waits for the load (started by the reply engine's first pull, after its sign of life),
 * shows the attachments' notices as a block of their own, then streams the loop's events.
 */
function runAgent(
  deps: AnswerDeps,
  message: InboundMessage,
  load: () => Promise<LoadedTurn>,
  signal: AbortSignal,
  port: ReplyPort,
): AgentRun {
  const seen = { text: "" };
  async function* events(): AsyncGenerator<AgentEvent> {
    const turn = await load();
    if (!turn.answerable) {
      // Nothing for the model: the notices are the answer, and the history keeps them as such (the conversation goes on).
      const text = turn.notices.join("\n");
      yield { type: "text-delta", round: 1, text };
      yield { type: "finish", reason: "stop", text, messages: [{ role: "assistant", content: text }], rounds: 0 };
      return;
    }
    // Round 0 is before the model's first round: never merged into the answer's text.
    if (turn.notices.length > 0) yield { type: "text-delta", round: 0, text: turn.notices.join("\n") };
    const options: AgentRunOptions = {
      settings: turn.settings,
      shrinkHistory: turn.shrinkHistory,
      conversation: toolConversationOf(message, turn.settings),
    };
    yield* observed(deps.agent(turn.messages, signal, options), deps, seen, port);
  }
  return { events: events(), textSoFar: () => seen.text };
}

/** Observes events on their way to the reply engine (metrics), without changing them. */
async function* observed(
  events: AsyncIterable<AgentEvent>,
  deps: AnswerDeps,
  seen: { text: string },
  port: ReplyPort,
): AsyncGenerator<AgentEvent> {
  const now = deps.now ?? Date.now;
  let roundStart = now();
  let firstTokenAt: number | undefined;
  for await (const event of events) {
    if (event.type === "text-delta" || event.type === "reasoning-delta") {
      if (event.type === "text-delta") seen.text += event.text;
      if (firstTokenAt === undefined) {
        firstTokenAt = now();
        deps.metrics?.modelFirstTokenSeconds.observe((firstTokenAt - roundStart) / 1000);
      }
    } else if (event.type === "tool-result") {
      deps.metrics?.toolCalls.inc({ tool: event.name, outcome: event.ok ? "ok" : "error" });
      // The next round's request goes out right after the last result.
      roundStart = now();
    } else if (event.type === "round-finish") {
      // Generation speed: tokens after the first over the time they took (prompt evaluation excluded).
      const seconds = firstTokenAt === undefined ? 0 : (now() - firstTokenAt) / 1000;
      const tokens = event.usage?.completionTokens ?? 0;
      if (event.usage) {
        deps.metrics?.modelRequestTokens.observe({ kind: "prompt" }, event.usage.promptTokens);
        deps.metrics?.modelRequestTokens.observe({ kind: "completion" }, tokens);
        observePromptCache(deps, event.usage);
      }
      if (tokens > 1 && seconds > 0) deps.metrics?.modelTokensPerSecond.observe((tokens - 1) / seconds);
      firstTokenAt = undefined;
      roundStart = now();
      // Text before a round of tool calls is a preamble; what the user keeps is the last round's answer.
      if (event.reason === "tool_calls") seen.text = "";
    } else if (event.type === "tool-call") {
      // Status reactions: one 🔧 when the first tool runs (the port ignores repeats).
      void port.status?.("tools");
    }
    // A port that draws the loop itself (the web chat) sees each event first.
    port.observe?.(event);
    yield event;
  }
}

/** What the server read of a prompt and what it took from its cache, when it said (llama.cpp's `timings`, `cached_tokens`). */
function observePromptCache(deps: Pick<AnswerDeps, "metrics" | "logger">, usage: Usage): void {
  if (usage.cachedTokens === undefined) return;
  const processed = Math.max(0, usage.promptTokens - usage.cachedTokens);
  deps.metrics?.modelPromptTokens.inc({ kind: "processed" }, processed);
  deps.metrics?.modelPromptTokens.inc({ kind: "reused" }, usage.cachedTokens);
  deps.logger.debug(
    {
      promptTokens: usage.promptTokens,
      cachedTokens: usage.cachedTokens,
      processedTokens: processed,
      ...(usage.promptMs !== undefined ? { promptMs: usage.promptMs } : {}),
    },
    "model prompt",
  );
}

/**
 * Steps 1 and 4, sign of life and delivery: the reply engine shows typing and a placeholder, then pulls the
 * events (which loads the turn and runs the agent) and streams them into the chat.
 */
function deliver(
  deps: AnswerDeps,
  message: InboundMessage,
  ctx: JobContext,
  port: ReplyPort,
  run: AgentRun,
  settings: () => ConversationSettings | undefined,
  log: Logger,
): Promise<Delivered> {
  const now = deps.now ?? Date.now;
  return streamReply({
    port,
    chatKey: pacingKey(message),
    events: run.events,
    journal: ctx.journal,
    // Read on every render: the conversation's choice is known once the first event is pulled, before any is shown.
    get showReasoning() {
      return settings()?.reasoning ?? deps.showReasoning;
    },
    gate: deps.gate,
    signal: ctx.signal,
    typing: !typingStillShown(message, ctx.attempt, now()),
    onFirstVisible: () =>
      deps.metrics?.firstVisibleSeconds.observe({ platform: message.platform }, (now() - message.receivedAt) / 1000),
    // A retry continues this message: only the last attempt writes the failure into it.
    failureLine: (error) => (ctx.isFinalAttempt ? failureLineFor(error) : undefined),
    logger: log,
    transform: deps.transformReply,
  });
}

/** Step 5, store: appends the turn (a stopped answer keeps what the user saw), marks the job answered, folds. */
async function storeTurn(
  deps: AnswerDeps,
  message: InboundMessage,
  ctx: JobContext,
  port: ReplyPort,
  turn: LoadedTurn | undefined,
  result: Delivered,
  textSoFar: string,
  log: Logger,
): Promise<void> {
  const finish = result.finish;
  // A turn stopped before its load finished is stored with the question as the user wrote it.
  const messages: ChatMessage[] = [turn?.user ?? toUserMessage(message), ...(finish?.messages ?? [])];
  if (!finish && result.stopped) {
    const partial = textSoFar.trim();
    messages.push({
      role: "assistant",
      content: partial ? `${partial} … (stopped by the user)` : "(stopped before answering)",
    });
  }
  const tokens = await deps.context?.countTurn(messages);
  let size: HistorySize | undefined;
  const stored = await deps.history.append(message.conversationKey, messages, {
    askedAt: message.receivedAt,
    ...(tokens ? { tokens } : {}),
    onStored: (told) => (size = told),
    ...(turn?.summaryTokens === 0 ? { summary: false } : {}),
  });
  if (!stored) log.info("conversation was reset while answering: turn not stored");
  await ctx.markAnswered();
  // Spoken too, once the text is final, as the chat's /voice says (auto: a voice note; spoken-answer.ts; never throws).
  if (
    deps.speech &&
    finish?.reason === "stop" &&
    finish.rounds > 0 &&
    wantsSpokenAnswer(turn?.settings?.voice, message)
  )
    await speakAnswer(deps.speech, port, deps.transformReply?.(finish.text) ?? finish.text, ctx.signal);
  // Only once delivered and stored may old turns be folded; not under the job's signal, which a /stop aborts.
  if (stored) {
    await deps.compactor?.afterAnswer(message.conversationKey, {
      shared: message.chatType !== "private",
      stored: size,
      summaryTokens: turn?.summaryTokens,
      prefix: finish?.prefix,
    });
  }
}

/** The chat of a message as the tools see it. */
function toolConversationOf(message: InboundMessage, settings?: ConversationSettings): ToolConversation {
  return {
    platform: message.platform,
    conversationKey: message.conversationKey,
    chatId: message.chatId,
    ...(message.threadId ? { threadId: message.threadId } : {}),
    chatType: message.chatType,
    ...(message.guildId ? { guildId: message.guildId } : {}),
    author: { id: message.author.id, displayName: message.author.displayName },
    ...(settings?.timeZone ? { timeZone: settings.timeZone } : {}),
  };
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
      // The load starts when the reply engine first asks for an event, after its sign of life. A failed load
      // surfaces as a stream error (retried like a model failure, the placeholder kept in the journal).
      let loaded: LoadedTurn | undefined; // undefined until the load has finished
      let loading: Promise<LoadedTurn> | undefined;
      const load = () => (loading ??= loadTurn(deps, message, ctx.signal).then((turn) => (loaded = turn)));
      const run = runAgent(deps, message, load, ctx.signal, port);
      const result = await deliver(deps, message, ctx, port, run, () => loaded?.settings, log);
      // Handed to another process, which continues this reply: nothing goes into history here.
      if (cancelKindOf(ctx.signal) === "shutdown") return "interrupted";
      await storeTurn(deps, message, ctx, port, loaded, result, run.textSoFar(), log);
      // Status reactions: cosmetic and paced, the job does not wait for them.
      void port.status?.("done");
      // The outcome's info line is the queue runtime's (observability/job-outcomes.ts).
      log.debug(
        {
          finish: result.stopped ? "stopped" : (result.finish?.reason ?? "unknown"),
          rounds: result.finish?.rounds,
          messages: result.messageIds.length,
          ms: now() - startedAt,
        },
        "answered",
      );
      return result.stopped ? "stopped" : "answered";
    } catch (error) {
      // No retry can help: the runtime gives up at once and the give-up handler says why, in the same message.
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
    const port = factory(message);
    void port.status?.("failed");
    await showFailure(port, ctx.journal, failureLineFor(error), {
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
