import type { Platform } from "./inbound-message.js";

/** The chat a tool call comes from (for schedules), handed over per answer, never through a global. */
export interface ToolConversation {
  platform: Platform;
  conversationKey: string;
  chatId: string;
  threadId?: string;
  chatType: "private" | "group" | "channel";
  guildId?: string;
  author: { id: string; displayName: string };
  /** The chat's IANA zone (its /timezone), when it chose one. */
  timeZone?: string;
}
