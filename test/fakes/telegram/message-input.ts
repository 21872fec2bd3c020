/**
 * What the Bot API checks in the text, markup and thread of a message the bot sends or edits:
 * parse_mode (HTML parsed like the real server, with its "can't parse entities" errors) or
 * explicit entities, the inline keyboard's shape and callback data size, and whether the
 * thread exists in that chat.
 */
import type { MessageEntity } from "grammy/types";
import { TelegramHtmlError, parseTelegramHtml, trimParsed, type ParsedText } from "../telegram-html.js";
import { detectEntities } from "./entities.js";
import { bad } from "./method-outcomes.js";
import { jsonArg, str } from "./method-params.js";
import type { ChatState } from "./state.js";

/**
 * Telegram finds @username mentions in a bot's text by itself, whatever the parse mode (and a mention
 * in a group notifies that member), except inside code, pre and links.
 */
function withAutoMentions(parsed: ParsedText): ParsedText {
  const opaque = parsed.entities.filter((e) => ["code", "pre", "text_link", "text_mention", "url"].includes(e.type));
  const mentions = detectEntities(parsed.text).filter(
    (m) =>
      m.type === "mention" && !opaque.some((e) => m.offset < e.offset + e.length && e.offset < m.offset + m.length),
  );
  if (mentions.length === 0) return parsed;
  return { ...parsed, entities: [...parsed.entities, ...mentions].sort((a, b) => a.offset - b.offset) };
}

/** The text and entities as chats show them, from `parse_mode` or `entities`. */
function parseMarkup(raw: string, p: Record<string, unknown>): ParsedText {
  const mode = str(p.parse_mode);
  if (p.entities !== undefined && !mode) {
    const entities = jsonArg(p.entities, "entities");
    return trimParsed({ text: raw, entities: Array.isArray(entities) ? (entities as MessageEntity[]) : [] });
  }
  if (mode === undefined || mode === "") return trimParsed({ text: raw, entities: [] });
  if (mode.toLowerCase() === "html") {
    try {
      return parseTelegramHtml(raw);
    } catch (err) {
      if (err instanceof TelegramHtmlError) throw bad(`can't parse entities: ${err.message}`);
      throw err;
    }
  }
  if (mode === "Markdown" || mode === "MarkdownV2") {
    // Not modelled: the fake keeps the source as plain text (our bot only sends HTML).
    return trimParsed({ text: raw, entities: [] });
  }
  throw bad("unsupported parse_mode");
}

/** The text a message shows, with the entities the bot asked for and the mentions Telegram adds. */
export function parseText(raw: string, p: Record<string, unknown>): ParsedText {
  return withAutoMentions(parseMarkup(raw, p));
}

/** The reply markup as stored (undefined for none or an empty keyboard), or the 400 the real server answers. */
export function checkMarkup(value: unknown): Record<string, unknown> | undefined {
  if (value === undefined) return undefined;
  const markup = jsonArg(value, "reply markup") as { inline_keyboard?: unknown } | undefined;
  if (!markup || typeof markup !== "object") throw bad("can't parse reply keyboard markup JSON object");
  if (markup.inline_keyboard !== undefined) {
    if (!Array.isArray(markup.inline_keyboard))
      throw bad('field "inline_keyboard" of the InlineKeyboardMarkup must be an Array of Arrays');
    for (const row of markup.inline_keyboard as unknown[]) {
      if (!Array.isArray(row))
        throw bad('field "inline_keyboard" of the InlineKeyboardMarkup must be an Array of Arrays');
      for (const button of row as { text?: unknown; callback_data?: unknown; url?: unknown }[]) {
        if (typeof button.text !== "string" || button.text === "")
          throw bad("text buttons are unallowed in the inline keyboard");
        if (button.callback_data !== undefined) {
          const bytes = Buffer.byteLength(String(button.callback_data), "utf8");
          if (bytes < 1 || bytes > 64) throw bad("BUTTON_DATA_INVALID");
        }
      }
    }
    if ((markup.inline_keyboard as unknown[]).length === 0) return undefined;
  }
  return markup as Record<string, unknown>;
}

/** Throws the real server's 400 unless `threadId` is a topic (forums) or a message (other supergroups) of the chat. */
export function checkThread(state: ChatState, threadId: number): void {
  const chat = state.chat;
  if (chat.type === "supergroup" && chat.is_forum) {
    if (!state.topics.has(threadId)) throw bad("message thread not found");
  } else if (chat.type === "supergroup") {
    if (!state.messages.has(threadId)) throw bad("message thread not found");
  } else {
    throw bad("message thread not found");
  }
}
