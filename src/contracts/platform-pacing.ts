/**
 * A platform's pacing rules as its adapter knows them: how far apart requests into one chat must
 * be and which bot-wide budget they draw on. The reply port's limits and the shared rate gate
 * read the same rules, so each platform's figures are written once, in its adapter.
 */

/** Which requests a pacing key paces: a chat's messages (sends and edits) or its drafts (previews). */
export type PacingLane = "message" | "draft";

/** A bot-wide budget: every chat mapped to the same key shares `perSecond`. */
export interface GlobalBudget {
  key: string;
  perSecond: number;
}

/** One platform's pacing. */
export interface PlatformPacing {
  /** Minimum time between two requests of `lane` into the chat `chatId`, in ms. */
  intervalMs(chatId: string, lane: PacingLane): number;
  /** The bot-wide budget requests of `lane` draw on, or undefined for none. */
  globalBudget(lane: PacingLane): GlobalBudget | undefined;
}
