/**
 * The entities Telegram clients add to what a user types: bot commands, @mentions and URLs,
 * with UTF-16 offsets as the Bot API counts them.
 */
import type { MessageEntity } from "grammy/types";

/** Finds what Telegram clients mark up by themselves: bot commands, @mentions, URLs (UTF-16 offsets). */
export function detectEntities(text: string): MessageEntity[] {
  const found: MessageEntity[] = [];
  const word = /[\p{L}\p{N}_]/u;
  for (const m of text.matchAll(/\/[a-zA-Z0-9_]{1,64}(?:@[a-zA-Z0-9_]{3,32})?/g)) {
    const before = text[m.index - 1];
    const after = text[m.index + m[0].length];
    if (before && (word.test(before) || "/<>".includes(before))) continue;
    if (after && (word.test(after) || "/<>@".includes(after))) continue;
    found.push({ type: "bot_command", offset: m.index, length: m[0].length });
  }
  for (const m of text.matchAll(/@[a-zA-Z0-9_]{2,32}/g)) {
    const before = text[m.index - 1];
    const after = text[m.index + m[0].length];
    if (before && (word.test(before) || before === "/")) continue;
    if (after && word.test(after)) continue;
    if (found.some((e) => e.type === "bot_command" && e.offset < m.index && m.index < e.offset + e.length)) continue;
    found.push({ type: "mention", offset: m.index, length: m[0].length });
  }
  for (const m of text.matchAll(/https?:\/\/[^\s<>"]+/g))
    found.push({ type: "url", offset: m.index, length: m[0].length });
  return found.sort((a, b) => a.offset - b.offset);
}
