/**
 * Telegram's `parse_mode: "HTML"` parser, as the Bot API server runs it (a port of
 * tdlib's `parse_html` in td/telegram/MessageEntity.cpp): the same accepted tags,
 * the same entity decoding, the same error texts with the same UTF-8 byte offsets,
 * then the same trimming of the result. The fake server uses it so that HTML our
 * renderer gets wrong fails here exactly as it would fail in production.
 */
import type { MessageEntity } from "grammy/types";

/** A parse failure; `message` is tdlib's text, without the Bot API's "Bad Request: can't parse entities: " prefix. */
export class TelegramHtmlError extends Error {
  override readonly name = "TelegramHtmlError";
}

/** Text as Telegram stores it: visible characters plus entities (offsets in UTF-16 code units). */
export interface ParsedText {
  text: string;
  entities: MessageEntity[];
}

const ALLOWED_TAGS = new Set([
  "a",
  "b",
  "strong",
  "i",
  "em",
  "s",
  "strike",
  "del",
  "u",
  "ins",
  "tg-spoiler",
  "tg-emoji",
  "tg-time",
  "span",
  "pre",
  "code",
  "blockquote",
]);

// tdlib's is_space: the C string's terminating NUL counts as space, which is how its loops stop at the end.
const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a || c === 0 || c === 0x0b;
const isAlpha = (c: number) => (c | 0x20) >= 0x61 && (c | 0x20) <= 0x7a;
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;
const isHex = (c: number) => isDigit(c) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x66);
const isAlnum = (c: number) => isAlpha(c) || isDigit(c);

interface OpenTag {
  tag: string;
  argument: string;
  utf16Offset: number;
  /** Where the entity's text starts in the output bytes (for `<a>` without href). */
  outStart: number;
}

/** Decodes `&…;` at `pos` like tdlib: returns the code point (0 = not an entity, keep '&' literally) and the next position. */
function decodeEntity(bytes: Uint8Array, pos: number): { code: number; next: number } {
  const at = (i: number) => bytes[i] ?? 0;
  let end = pos + 1;
  let code = 0;
  if (at(pos + 1) === 0x23 /* # */) {
    end++;
    if (at(pos + 2) === 0x78 /* x */) {
      end++;
      while (isHex(at(end))) code = code * 16 + parseInt(String.fromCharCode(at(end++)), 16);
    } else {
      while (isDigit(at(end))) code = code * 10 + (at(end++) - 0x30);
    }
    if (code === 0 || code >= 0x10ffff || end - pos >= 10) return { code: 0, next: pos };
  } else {
    while (isAlpha(at(end))) end++;
    const name = Buffer.from(bytes.subarray(pos + 1, end)).toString("latin1");
    const named: Record<string, number> = { lt: 0x3c, gt: 0x3e, amp: 0x26, quot: 0x22 };
    code = named[name] ?? 0;
    if (code === 0) return { code: 0, next: pos };
  }
  return { code, next: at(end) === 0x3b /* ; */ ? end + 1 : end };
}

/**
 * tdlib's LinkManager::get_link_user_id: `tg:` (with or without `//`), then `user`, an optional `/`,
 * `?`, and an `id` parameter, all case-insensitive. Such a link is a mention of that user
 * (a MessageEntity MentionName, `text_mention` in the Bot API), not a link.
 */
function linkUserId(url: string): number | undefined {
  let rest = url.toLowerCase();
  if (!rest.startsWith("tg:")) return undefined;
  rest = rest.slice(3);
  if (rest.startsWith("//")) rest = rest.slice(2);
  if (!rest.startsWith("user")) return undefined;
  rest = rest.slice(4);
  if (rest.startsWith("/")) rest = rest.slice(1);
  if (!rest.startsWith("?")) return undefined;
  rest = rest.slice(1);
  const hash = rest.indexOf("#");
  if (hash !== -1) rest = rest.slice(0, hash);
  for (const parameter of rest.split("&")) {
    const eq = parameter.indexOf("=");
    const key = eq === -1 ? parameter : parameter.slice(0, eq);
    if (key !== "id") continue;
    const value = eq === -1 ? "" : parameter.slice(eq + 1);
    // to_integer_safe: an optional minus and digits only, within int64; user ids are positive.
    if (!/^-?\d{1,19}$/.test(value)) return undefined;
    const id = Number(value);
    return id > 0 ? id : undefined;
  }
  return undefined;
}

function checkedLink(url: string): string | undefined {
  // tdlib's LinkManager::get_checked_link accepts http(s), tg:, ton:, mailto-like and bare domains;
  // anything else (javascript:, data:) silently produces no entity.
  if (/^(https?|tg|ton|mailto):/i.test(url)) return url;
  if (/^[a-z0-9.-]+\.[a-z]{2,}(\/|$)/i.test(url)) return `http://${url}`;
  return undefined;
}

/** Reads a start tag from `begin` (its `<`): the tag, the one attribute that matters, and where its `>` is. */
function readStartTag(bytes: Uint8Array, begin: number): { tag: string; argument: string; end: number } {
  const n = bytes.length;
  const at = (k: number) => (k < n ? (bytes[k] as number) : 0);
  let i = begin + 1;
  while (!isSpace(at(i)) && at(i) !== 0x3e) i++;
  if (at(i) === 0 && i >= n) throw new TelegramHtmlError(`Unclosed start tag at byte offset ${begin}`);
  const tag = Buffer.from(bytes.subarray(begin + 1, i))
    .toString("utf8")
    .toLowerCase();
  if (!ALLOWED_TAGS.has(tag)) throw new TelegramHtmlError(`Unsupported start tag "${tag}" at byte offset ${begin}`);

  let argument = "";
  while (at(i) !== 0x3e) {
    while (i < n && isSpace(at(i))) i++;
    if (at(i) === 0x3e) break;
    const attrBegin = i;
    while (!isSpace(at(i)) && ![0x3d, 0x3e, 0x2f, 0x22, 0x27].includes(at(i))) i++;
    const attr = Buffer.from(bytes.subarray(attrBegin, i)).toString("utf8");
    if (attr === "") throw new TelegramHtmlError(`Empty attribute name in the tag "${tag}" at byte offset ${begin}`);
    while (i < n && isSpace(at(i))) i++;
    if (at(i) !== 0x3d /* = */) {
      if (i >= n) throw new TelegramHtmlError(`Unclosed start tag "${tag}" at byte offset ${begin}`);
      if (tag === "blockquote" && attr === "expandable") argument = "1";
      continue;
    }
    i++;
    while (i < n && isSpace(at(i))) i++;
    if (i >= n) throw new TelegramHtmlError(`Unclosed start tag "${tag}" at byte offset ${begin}`);
    let value: string;
    if (at(i) !== 0x27 && at(i) !== 0x22) {
      const tokenBegin = i;
      while (isAlnum(at(i)) || at(i) === 0x2e || at(i) === 0x2d) i++;
      value = Buffer.from(bytes.subarray(tokenBegin, i)).toString("utf8").toLowerCase();
      if (!isSpace(at(i)) && at(i) !== 0x3e)
        throw new TelegramHtmlError(`Unexpected end of name token at byte offset ${tokenBegin}`);
    } else {
      const quote = at(i++);
      const valueBytes: number[] = [];
      while (i < n && at(i) !== quote) {
        if (at(i) === 0x26) {
          const { code, next } = decodeEntity(bytes, i);
          if (code !== 0) {
            valueBytes.push(...Buffer.from(String.fromCodePoint(code), "utf8"));
            i = next;
            continue;
          }
        }
        valueBytes.push(at(i++));
      }
      if (at(i) === quote && i < n) i++;
      value = Buffer.from(valueBytes).toString("utf8");
    }
    if (i >= n) throw new TelegramHtmlError(`Unclosed start tag at byte offset ${begin}`);
    if (tag === "a" && attr === "href") argument = value;
    else if (tag === "code" && attr === "class" && value.startsWith("language-")) argument = value.slice(9);
    else if (tag === "span" && attr === "class" && value.startsWith("tg-")) argument = value.slice(3);
    else if (tag === "tg-emoji" && attr === "emoji-id") argument = value;
    else if (tag === "blockquote" && attr === "expandable") argument = "1";
  }
  if (tag === "span" && argument !== "spoiler") {
    throw new TelegramHtmlError(`Tag "span" must have class "tg-spoiler" at byte offset ${begin}`);
  }
  return { tag, argument, end: i };
}

/** The entity a closed tag makes, if any (`<pre><code class="language-x">` merge into one `pre`). */
function closeEntity(
  entities: MessageEntity[],
  top: OpenTag,
  offset: number,
  length: number,
  linkText: () => string,
): void {
  const last = entities[entities.length - 1];
  switch (top.tag) {
    case "b":
    case "strong":
      entities.push({ type: "bold", offset, length });
      break;
    case "i":
    case "em":
      entities.push({ type: "italic", offset, length });
      break;
    case "u":
    case "ins":
      entities.push({ type: "underline", offset, length });
      break;
    case "s":
    case "strike":
    case "del":
      entities.push({ type: "strikethrough", offset, length });
      break;
    case "tg-spoiler":
    case "span":
      entities.push({ type: "spoiler", offset, length });
      break;
    case "tg-emoji":
      if (!/^[1-9]\d*$/.test(top.argument)) throw new TelegramHtmlError("Invalid custom emoji identifier specified");
      entities.push({ type: "custom_emoji", offset, length, custom_emoji_id: top.argument });
      break;
    case "tg-time":
      break; // formatted dates are not modelled; tdlib drops them without a unix attribute too
    case "a": {
      const url = top.argument || linkText();
      const userId = linkUserId(url);
      if (userId !== undefined) {
        entities.push({ type: "text_mention", offset, length, user: { id: userId, is_bot: false, first_name: "" } });
      } else {
        const checked = checkedLink(url);
        if (checked) entities.push({ type: "text_link", offset, length, url: checked });
      }
      break;
    }
    case "pre":
      if (
        last &&
        last.type === "code" &&
        last.offset === offset &&
        last.length === length &&
        (last as { language?: string }).language
      ) {
        const language = (last as { language?: string }).language as string;
        entities[entities.length - 1] = { type: "pre", offset, length, language };
      } else {
        entities.push({ type: "pre", offset, length });
      }
      break;
    case "code":
      if (last && last.type === "pre" && last.offset === offset && last.length === length && top.argument) {
        entities[entities.length - 1] = { type: "pre", offset, length, language: top.argument };
      } else {
        // The language is kept for a moment so an enclosing <pre> can claim it; dropped below otherwise.
        entities.push({
          type: "code",
          offset,
          length,
          ...(top.argument ? { language: top.argument } : {}),
        } as MessageEntity);
      }
      break;
    case "blockquote":
      entities.push({ type: top.argument ? "expandable_blockquote" : "blockquote", offset, length });
      break;
  }
}

/**
 * Parses Telegram HTML into visible text and entities, or throws TelegramHtmlError with
 * the Bot API's own message (e.g. `Unsupported start tag "p" at byte offset 0`).
 */
export function parseTelegramHtml(html: string): ParsedText {
  const bytes = new Uint8Array(Buffer.from(html, "utf8"));
  const n = bytes.length;
  const at = (i: number) => (i < n ? (bytes[i] as number) : 0);
  const out: number[] = [];
  const entities: MessageEntity[] = [];
  const open: OpenTag[] = [];
  let utf16 = 0;

  const appendCodePoint = (code: number) => {
    out.push(...Buffer.from(String.fromCodePoint(code), "utf8"));
    utf16 += code > 0xffff ? 2 : 1;
  };

  for (let i = 0; i < n; i++) {
    const c = at(i);
    if (c === 0x26 /* & */) {
      const { code, next } = decodeEntity(bytes, i);
      if (code !== 0) {
        appendCodePoint(code);
        i = next - 1;
        continue;
      }
    }
    if (c !== 0x3c /* < */) {
      // Count UTF-16 units on the first byte of each UTF-8 sequence; 4-byte sequences are surrogate pairs.
      if ((c & 0xc0) !== 0x80) utf16 += c >= 0xf0 ? 2 : 1;
      out.push(c);
      continue;
    }

    const begin = i++;
    if (at(i) !== 0x2f /* / */) {
      const start = readStartTag(bytes, begin);
      i = start.end;
      open.push({ tag: start.tag, argument: start.argument, utf16Offset: utf16, outStart: out.length });
      continue;
    }

    // An end tag.
    if (open.length === 0) throw new TelegramHtmlError(`Unexpected end tag at byte offset ${begin}`);
    while (!isSpace(at(i)) && at(i) !== 0x3e) i++;
    const endTag = Buffer.from(bytes.subarray(begin + 2, i))
      .toString("utf8")
      .toLowerCase();
    while (i < n && isSpace(at(i))) i++;
    if (at(i) !== 0x3e || i >= n) throw new TelegramHtmlError(`Unclosed end tag at byte offset ${begin}`);
    const top = open[open.length - 1] as OpenTag;
    if (endTag !== "" && endTag !== top.tag) {
      throw new TelegramHtmlError(
        `Unmatched end tag at byte offset ${begin}, expected "</${top.tag}>", found "</${endTag}>"`,
      );
    }
    if (utf16 > top.utf16Offset) {
      const offset = top.utf16Offset;
      const length = utf16 - offset;
      closeEntity(entities, top, offset, length, () => Buffer.from(out.slice(top.outStart)).toString("utf8"));
    }
    open.pop();
  }
  if (open.length > 0) {
    throw new TelegramHtmlError(
      `Can't find end tag corresponding to start tag "${(open[open.length - 1] as OpenTag).tag}"`,
    );
  }
  for (const e of entities) if (e.type === "code") delete (e as { language?: string }).language;
  entities.sort((a, b) => a.offset - b.offset || b.length - a.length);
  return trimParsed({ text: Buffer.from(out).toString("utf8"), entities });
}

/**
 * tdlib's fix_formatted_text trimming: trailing whitespace is cut (entities clipped),
 * leading spaces and newlines are cut up to the first entity.
 */
export function trimParsed(parsed: ParsedText): ParsedText {
  let { text } = parsed;
  let entities = parsed.entities.map((e) => ({ ...e }));
  const rtrimmed = text.replace(/\s+$/u, "");
  if (rtrimmed.length < text.length) {
    const end = rtrimmed.length;
    entities = entities
      .filter((e) => e.offset < end)
      .map((e) => (e.offset + e.length > end ? { ...e, length: end - e.offset } : e));
    text = rtrimmed;
  }
  const firstEntity = entities.length ? Math.min(...entities.map((e) => e.offset)) : text.length;
  let lead = 0;
  while (lead < firstEntity && (text[lead] === " " || text[lead] === "\n")) lead++;
  if (lead > 0) {
    text = text.slice(lead);
    entities = entities.map((e) => ({ ...e, offset: e.offset - lead }));
  }
  return { text, entities };
}

/** What Telegram counts against the 4096 limit: Unicode code points of the parsed, trimmed text (tdlib's utf8_length). */
export function telegramTextLength(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}
