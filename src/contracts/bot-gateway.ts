/** What an adapter may do with the rest of the system; it never sees the model, the worker or Redis directly. */
import type { InboundMessage } from "./inbound-message.js";

/** The outcome of offering a message to the queue. */
export type EnqueueResult =
  | { status: "queued"; jobId: string }
  | { status: "duplicate"; jobId: string }
  /** Refused before queueing; `reason` is a short text for the user (absent: refuse silently, already told). */
  | { status: "refused"; reason?: string };

export interface BotGateway {
  /** Resolves only once the message is durably in Redis (so the platform update may be acknowledged). */
  enqueue(message: InboundMessage): Promise<EnqueueResult>;
  /** Clears the conversation's history and summary (`/reset`). */
  reset(conversationKey: string): Promise<void>;
  /** Folds the conversation's older turns into its summary now (`/compact`); resolves the text to show. */
  compact?(conversationKey: string, opts: { shared: boolean }): Promise<string>;
  /** `/stop`: cancels the answer in flight on whichever worker runs it; true if one was running. */
  stop(conversationKey: string): Promise<boolean>;
  /** Waits for a slot in the chat's edit budget (shared with streaming) before a courtesy reply. */
  replySlot?(platform: InboundMessage["platform"], chatId: string): Promise<void>;
  /**
   * Counts a courtesy reply against the user's per-minute limit; false: send nothing (a flood of refusals must
   * not spend the bot's send budget). An `outsider` (not on the allow lists) is told at most once a minute.
   */
  mayReply?(platform: InboundMessage["platform"], userId: string, opts?: { outsider?: boolean }): Promise<boolean>;
}
