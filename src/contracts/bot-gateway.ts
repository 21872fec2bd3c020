/**
 * What an adapter may do with the rest of the system: validate-and-enqueue,
 * and the two commands that must not wait in the queue. Adapters get this
 * injected; they never see the model, the worker or Redis directly.
 */
import type { InboundMessage } from "./inbound-message.js";

/** The outcome of offering a message to the queue. */
export type EnqueueResult =
  | { status: "queued"; jobId: string }
  | { status: "duplicate"; jobId: string }
  /** Refused before queueing; `reason` is a short text to show the user (absent: refuse silently, the user was told already). */
  | { status: "refused"; reason?: string };

export interface BotGateway {
  /** Resolves only once the message is durably in Redis (so the platform update may be acknowledged). */
  enqueue(message: InboundMessage): Promise<EnqueueResult>;
  /** Clears the conversation's history and summary (`/reset`). */
  reset(conversationKey: string): Promise<void>;
  /** Folds the conversation's older turns into its summary now (`/compact`); resolves the text to show. */
  compact?(conversationKey: string, opts: { shared: boolean }): Promise<string>;
  /** Cancels the answer in flight in this conversation, on whichever worker runs it (`/stop`); true if one was running. */
  stop(conversationKey: string): Promise<boolean>;
  /**
   * Waits for a slot in the chat's edit budget (the one the workers' streaming shares) before a
   * courtesy reply (help, refusals, acknowledgements), so it cannot collide with an answer's edits.
   */
  replySlot?(platform: InboundMessage["platform"], chatId: string): Promise<void>;
  /**
   * Counts a courtesy reply (refusal, help, acknowledgement) against the user's per-minute limit before it
   * is sent; false: send nothing (a flood of refused messages must not spend the bot's send budget).
   * An `outsider` (not on the allow lists) is told at most once a minute.
   */
  mayReply?(platform: InboundMessage["platform"], userId: string, opts?: { outsider?: boolean }): Promise<boolean>;
}
