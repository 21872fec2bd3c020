/**
 * The one builder of queue payloads for tests: a valid InboundMessage (checked by the real schema)
 * from the fields a test cares about; the conversation key follows the adapters' spelling.
 */
import { inboundMessageSchema, type InboundMessage } from "../../src/contracts/inbound-message.js";

/** The conversation key an adapter would give this chat. */
function conversationKeyOf(m: Pick<InboundMessage, "platform" | "chatId" | "threadId">): string {
  switch (m.platform) {
    case "telegram":
      return m.threadId !== undefined ? `tg:${m.chatId}:${m.threadId}` : `tg:${m.chatId}`;
    case "discord":
      return `dc:${m.chatId}`;
    case "terminal":
      return `term:${m.chatId}`;
    case "web":
      return `web:${m.chatId}`;
  }
}

/** A valid message; every field can be overridden. Defaults: Alice asks "hi" in a private Telegram chat, now. */
export function inboundMessage(overrides: Partial<InboundMessage> = {}): InboundMessage {
  const base = {
    platform: "telegram" as const,
    chatId: "1001",
    messageId: "1",
    chatType: "private" as const,
    author: { id: "1001", displayName: "Alice" },
    text: "hi",
    receivedAt: Date.now(),
    ...overrides,
  };
  return inboundMessageSchema.parse({ conversationKey: conversationKeyOf(base), ...base });
}
