/** A platform's pacing rules, written once in its adapter and read by its reply port and the shared rate gate. */

/** Which requests a pacing key paces: a chat's messages (sends and edits) or its drafts (previews). */
export type PacingLane = "message" | "draft";

/** The pacing key of a chat: limits apply per chat, so forum topics share the group's key. */
export function chatPacingKey(platform: string, chatId: string): string {
  return `${platform}:${chatId}`;
}

/** Marks the pacing key of a chat's drafts (see `draftPacingKey`). */
const DRAFT_KEY_SUFFIX = ":draft";

/** The pacing key of a chat's drafts (Telegram sendMessageDraft): paced apart from its messages, own budget. */
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
