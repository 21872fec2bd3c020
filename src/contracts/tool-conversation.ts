/**
 * The chat a tool call comes from, for the tools that act on it (schedules): handed to the tool through
 * its execution context, per answer, never through a global.
 */
import type { Platform } from "./inbound-message.js";

/** Where the answer goes and who asked. */
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
