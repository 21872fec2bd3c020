/**
 * A platform as the reply engine sees it: send, edit, a "working" signal and
 * its limits. Adapters implement it; the engine knows nothing else about them.
 * Text given to `send`/`edit` is already rendered for the platform by `format`.
 */

/** Limits of one chat, in the platform's own terms. */
export interface ReplyLimits {
  /** Maximum length of one message after formatting (Discord 2000, Telegram 4096). */
  maxLength: number;
  /** Minimum time between two edits or sends in this chat, in ms. */
  minEditIntervalMs: number;
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
  /** Posts a new message in reply to the user's message; returns its id. */
  send(content: RenderedText, opts: { signal?: AbortSignal }): Promise<string>;
  /** Replaces the text of a message this job sent before. "Not modified" is not an error. */
  edit(messageId: string, content: RenderedText, opts: { signal?: AbortSignal }): Promise<void>;
  /** Shows that the bot is working (typing indicator); best effort. */
  typing?(opts: { signal?: AbortSignal }): Promise<void>;
}

/** The platform asked us to wait (HTTP 429 and friends). */
export class RateLimitedError extends Error {
  override readonly name = "RateLimitedError";
  constructor(
    readonly retryAfterMs: number,
    message = `rate limited, retry after ${retryAfterMs} ms`,
  ) {
    super(message);
  }
}

/** The platform refused the content itself (e.g. Telegram "can't parse entities"): retrying the same text will not help. */
export class RejectedContentError extends Error {
  override readonly name = "RejectedContentError";
}
