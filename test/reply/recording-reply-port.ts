/**
 * A test double of a platform reply port, in memory: it records every request
 * with its start and end time, keeps each message's visible text, and behaves
 * like the strict platform it imitates — a request inside the advertised
 * interval is answered with a 429 (and recorded as a violation; drafts are
 * previews, spaced by `draftIntervalMs` among themselves, apart from the
 * messages, as Telegram counts them), a text over
 * the advertised length or with HTML Telegram would reject is refused, an edit
 * that changes nothing is counted. It can be told to fail the next N requests.
 */
import { markdownToTelegramHtml, telegramVisibleText } from "../../src/bots/telegram/telegram-html.js";
import { toDiscordMarkdown } from "../../src/bots/discord/discord-markdown.js";
import {
  RateLimitedError,
  RejectedContentError,
  type RenderedText,
  type ReplyLimits,
  type ReplyPort,
  type SendOptions,
} from "../../src/contracts/reply-port.js";
import { validateTelegramHtml } from "./telegram-html-validator.js";

export type RequestKind = "send" | "edit" | "draft";

export interface RecordedRequest {
  kind: RequestKind;
  start: number;
  end?: number;
  messageId?: string;
  draftId?: number;
  content: RenderedText;
  final: boolean;
  continuation: boolean;
  outcome?: "ok" | "rate-limited" | "rejected" | "failed" | "aborted";
}

export interface VisibleMessage {
  id: string;
  text: string;
  parseMode?: "HTML";
  final: boolean;
  continuation: boolean;
}

export interface RecordingPortOptions {
  limits?: Partial<ReplyLimits>;
  /** How Markdown is rendered: like the Telegram port (HTML), like the Discord port, or plain. */
  flavour?: "telegram" | "discord" | "plain";
  /** Offer `draft` (Telegram private chats). */
  drafts?: boolean;
  /** How long each request takes (ms, on the clock of `setTimeout`). */
  latencyMs?: number | (() => number);
  /** Messages that exist already (a retried job), in order. */
  existing?: string[];
  now?: () => number;
}

export interface RecordingReplyPort extends ReplyPort {
  readonly requests: RecordedRequest[];
  readonly typingCalls: number;
  /** Requests that broke the advertised interval, length or HTML rules. */
  readonly violations: string[];
  readonly noOpEdits: number;
  readonly maxInFlight: number;
  /** The messages in the chat, in the order they were posted. */
  messages(): VisibleMessage[];
  /** The visible text of every message (HTML decoded for Telegram). */
  visibleTexts(): string[];
  /** The drafts shown, newest last. */
  readonly drafts: RenderedText[];
  /** The next `count` requests fail with `make()` (after their latency). */
  failNext(count: number, make: () => Error): void;
}

/** What a user sees of rendered content (Telegram counts the text after entity parsing). */
const visibleText = (content: RenderedText): string =>
  content.parseMode === "HTML" ? telegramVisibleText(content.text) : content.text;

/** Creates the recording port (see the module comment). */
export function createRecordingReplyPort(opts: RecordingPortOptions = {}): RecordingReplyPort {
  const limits: ReplyLimits = { maxLength: 4096, minEditIntervalMs: 1000, ...opts.limits };
  const flavour = opts.flavour ?? "telegram";
  const now = opts.now ?? Date.now;
  const latency =
    typeof opts.latencyMs === "function" ? opts.latencyMs : () => (opts.latencyMs as number | undefined) ?? 0;
  const requests: RecordedRequest[] = [];
  const violations: string[] = [];
  const chat = new Map<string, VisibleMessage>();
  const drafts: RenderedText[] = [];
  const failures: (() => Error)[] = [];
  let nextId = 1;
  /** When the last request of each lane started: drafts are paced apart from messages. */
  const lastStart = new Map<"draft" | "message", number>();
  let inFlight = 0;
  let maxInFlight = 0;
  let noOpEdits = 0;
  let typingCalls = 0;
  for (const text of opts.existing ?? []) {
    const id = `m${nextId++}`;
    chat.set(id, { id, text, final: true, continuation: chat.size > 0 });
  }

  const sleep = (ms: number, signal?: AbortSignal) =>
    new Promise<void>((resolve, reject) => {
      if (ms <= 0) return resolve();
      const timer = setTimeout(resolve, ms);
      signal?.addEventListener(
        "abort",
        () => {
          clearTimeout(timer);
          reject(signal.reason);
        },
        { once: true },
      );
    });

  /** Runs one request the way the platform would: interval check, failure injection, content checks, latency. */
  const perform = async <R>(request: RecordedRequest, signal: AbortSignal | undefined, effect: () => R): Promise<R> => {
    requests.push(request);
    inFlight++;
    maxInFlight = Math.max(maxInFlight, inFlight);
    try {
      if (signal?.aborted) {
        request.outcome = "aborted";
        throw signal.reason;
      }
      const lane = request.kind === "draft" ? "draft" : "message";
      const interval =
        lane === "draft" ? (limits.draftIntervalMs ?? limits.minEditIntervalMs) : limits.minEditIntervalMs;
      const previous = lastStart.get(lane);
      const since = previous === undefined ? Infinity : request.start - previous;
      lastStart.set(lane, request.start);
      if (since < interval) {
        violations.push(`${request.kind} ${since} ms after the previous ${lane} request (interval ${interval} ms)`);
        request.outcome = "rate-limited";
        throw new RateLimitedError(interval - since);
      }
      try {
        await sleep(latency(), signal);
      } catch (reason) {
        request.outcome = "aborted";
        throw reason;
      }
      const failure = failures.shift();
      if (failure) {
        const error = failure();
        request.outcome =
          error instanceof RateLimitedError
            ? "rate-limited"
            : error instanceof RejectedContentError
              ? "rejected"
              : "failed";
        throw error;
      }
      const length = visibleText(request.content).length;
      if (length > limits.maxLength) {
        violations.push(`${request.kind} of ${length} characters (limit ${limits.maxLength})`);
        request.outcome = "rejected";
        throw new RejectedContentError(`message is too long (${length})`);
      }
      if (visibleText(request.content).trim() === "") {
        violations.push(`${request.kind} of an empty text`);
        request.outcome = "rejected";
        throw new RejectedContentError("message text is empty");
      }
      if (request.content.parseMode === "HTML") {
        const problems = validateTelegramHtml(request.content.text);
        if (problems.length > 0) {
          violations.push(`can't parse entities: ${problems.join("; ")}`);
          request.outcome = "rejected";
          throw new RejectedContentError(`can't parse entities: ${problems[0]}`);
        }
      }
      const result = effect();
      request.outcome = "ok";
      return result;
    } finally {
      request.end = now();
      inFlight--;
    }
  };

  const format = (markdown: string): RenderedText => {
    switch (flavour) {
      case "telegram":
        return { text: markdownToTelegramHtml(markdown), parseMode: "HTML" };
      case "discord":
        return { text: toDiscordMarkdown(markdown) };
      case "plain":
        return { text: markdown };
    }
  };

  const port: RecordingReplyPort = {
    limits,
    format,
    ...(flavour === "telegram" ? { visibleText } : {}),
    async send(content: RenderedText, o: SendOptions): Promise<string> {
      const request: RecordedRequest = {
        kind: "send",
        start: now(),
        content,
        final: o.final === true,
        continuation: o.continuation === true,
      };
      return perform(request, o.signal, () => {
        const id = `m${nextId++}`;
        request.messageId = id;
        chat.set(id, {
          id,
          text: content.text,
          ...(content.parseMode ? { parseMode: content.parseMode } : {}),
          final: request.final,
          continuation: request.continuation,
        });
        return id;
      });
    },
    async edit(messageId: string, content: RenderedText, o: SendOptions): Promise<void> {
      const request: RecordedRequest = {
        kind: "edit",
        start: now(),
        messageId,
        content,
        final: o.final === true,
        continuation: o.continuation === true,
      };
      await perform(request, o.signal, () => {
        const message = chat.get(messageId);
        if (!message) throw new Error(`Bad Request: message to edit not found (${messageId})`);
        if (message.text === content.text && message.parseMode === content.parseMode && message.final === request.final)
          noOpEdits++;
        message.text = content.text;
        message.final = request.final;
        if (content.parseMode) message.parseMode = content.parseMode;
        else delete message.parseMode;
      });
    },
    get requests() {
      return requests;
    },
    get violations() {
      return violations;
    },
    get noOpEdits() {
      return noOpEdits;
    },
    get maxInFlight() {
      return maxInFlight;
    },
    get typingCalls() {
      return typingCalls;
    },
    get drafts() {
      return drafts;
    },
    async typing() {
      typingCalls++;
    },
    messages() {
      return [...chat.values()].map((m) => ({ ...m }));
    },
    visibleTexts() {
      return [...chat.values()].map((m) => visibleText(m));
    },
    failNext(count, make) {
      for (let n = 0; n < count; n++) failures.push(make);
    },
  };
  if (opts.drafts) {
    port.draft = async (draftId, content, o) => {
      const request: RecordedRequest = {
        kind: "draft",
        start: now(),
        draftId,
        content,
        final: false,
        continuation: false,
      };
      await perform(request, o.signal, () => {
        drafts.push(content);
      });
    };
  }
  return port;
}
