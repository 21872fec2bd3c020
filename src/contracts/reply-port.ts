/** A platform as the reply engine sees it; text given to `send`/`edit` is already rendered by `format`. */
import type { AgentEvent } from "./agent-events.js";

/** Limits of one chat, in the platform's own terms. */
export interface ReplyLimits {
  /** Maximum length of one message after formatting (Discord 2000, Telegram 4096). */
  maxLength: number;
  /** Minimum time between two edits or sends in this chat, in ms. */
  minEditIntervalMs: number;
  /** Minimum time between two drafts (`draft`) in this chat, in ms; default `minEditIntervalMs`. */
  draftIntervalMs?: number;
}

/** What the platform shows: rendered text and how it should be parsed. */
export interface RenderedText {
  text: string;
  /** Telegram "HTML"; undefined = plain text / the platform's own Markdown. */
  parseMode?: "HTML";
}

export interface ReplyPort {
  readonly limits: ReplyLimits;
  /** Renders Markdown from the model into the platform's format (must never produce text the platform rejects). */
  format(markdown: string): RenderedText;
  /** What a user sees of rendered content, as `limits.maxLength` counts it (Telegram: after entity parsing). */
  visibleText?(content: RenderedText): string;
  /** Posts a new message; returns its id. A reply's first one threads under the user's; not `final`: a Stop button. */
  send(content: RenderedText, opts: SendOptions): Promise<string>;
  /** Replaces the text of a message this job sent before. "Not modified" is not an error. */
  edit(messageId: string, content: RenderedText, opts: SendOptions): Promise<void>;
  /** Native streaming preview (Telegram sendMessageDraft), persisted with `send` at the end; expires after ~30 s. */
  draft?(draftId: number, content: RenderedText, opts: { signal?: AbortSignal }): Promise<void>;
  /** Shows that the bot is working (typing indicator); best effort. */
  typing?(opts: { signal?: AbortSignal }): Promise<void>;
  /** Sees every agent event, in order, before the engine renders it; must not throw or block. */
  observe?(event: AgentEvent): void;
  /** Sends a spoken answer as a voice message replying to the user's; returns its id. */
  sendVoice?(voice: SpokenAudio, opts: { signal?: AbortSignal }): Promise<string>;
  /** Marks the user's message with the answer's phase (STATUS_REACTIONS); best effort, never throws. */
  status?(phase: ReplyPhase): Promise<void>;
}

/** A spoken answer: OGG/Opus bytes and what the platform shows beside them. */
export interface SpokenAudio {
  bytes: Uint8Array;
  durationSeconds: number;
  /** Loudness over the recording, up to 256 samples 0..255 (what a Discord voice message draws). */
  waveform: Uint8Array;
  /** A short plain-text line under the voice message (e.g. "spoken: the first part only"). */
  caption?: string;
}

/** A reply's phase as a status reaction shows it: tools running, answered, or failed for good. */
export type ReplyPhase = "tools" | "done" | "failed";

export interface SendOptions {
  signal?: AbortSignal;
  /** This message continues a reply that overflowed the length limit. */
  continuation?: boolean;
  /** The text is the reply's last state for this message (remove Stop buttons etc.). */
  final?: boolean;
}

/** The worker builds one port per job from the queued message (ports are cheap; clients are shared). */
export type ReplyPortFactory = (message: import("./inbound-message.js").InboundMessage) => ReplyPort;

/** The platform asked us to wait (HTTP 429 and friends); `global`: the bot's whole budget, not only this chat's. */
export class RateLimitedError extends Error {
  override readonly name = "RateLimitedError";
  constructor(
    readonly retryAfterMs: number,
    message = `rate limited, retry after ${retryAfterMs} ms`,
    readonly global = false,
  ) {
    super(message);
  }
}

/** The platform refused the content itself (Telegram "can't parse entities"): retrying the same text will not help. */
export class RejectedContentError extends Error {
  override readonly name = "RejectedContentError";
}
