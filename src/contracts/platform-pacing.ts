/**
 * A platform's pacing rules as its adapter knows them: how far apart requests into one chat must
 * be and which bot-wide budget they draw on. The reply port's limits and the shared rate gate
 * read the same rules, so each platform's figures are written once, in its adapter.
 */

/** Which requests a pacing key paces: a chat's messages (sends and edits) or its drafts (previews). */
export type PacingLane = "message" | "draft";

/**
 * The pacing key of a chat: platform limits apply per chat, so a Telegram group's forum topics share
 * the group's key. Workers (streaming) and adapters (courtesy replies) must build it the same way.
 */
export function chatPacingKey(platform: string, chatId: string): string {
  return `${platform}:${chatId}`;
}

/** Marks the pacing key of a chat's drafts (see `draftPacingKey`). */
const DRAFT_KEY_SUFFIX = ":draft";

/**
 * The pacing key of a chat's drafts (Telegram sendMessageDraft): a draft is a preview, not a message, so it
 * is paced apart from the chat's messages and draws on its own bot-wide budget (see each adapter's pacing rules).
 */
export function draftPacingKey(chatKey: string): string {
  return `${chatKey}${DRAFT_KEY_SUFFIX}`;
}

/** The parts of a pacing key, as built by `chatPacingKey` (and `draftPacingKey`). */
export function parsePacingKey(chatKey: string): { platform: string; chatId: string; lane: PacingLane } {
  const lane: PacingLane = chatKey.endsWith(DRAFT_KEY_SUFFIX) ? "draft" : "message";
  const key = lane === "draft" ? chatKey.slice(0, -DRAFT_KEY_SUFFIX.length) : chatKey;
  const at = key.indexOf(":");
  return { platform: at < 0 ? key : key.slice(0, at), chatId: at < 0 ? "" : key.slice(at + 1), lane };
}

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
