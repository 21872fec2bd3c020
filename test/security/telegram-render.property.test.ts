/**
 * Fuzzing the Markdown → Telegram HTML renderer and the splitter against the fake's
 * tdlib-like parser (test/fakes/telegram-html.ts), the one that fails exactly like the
 * Bot API. test/reply/* already checks a strict validator; here the judge is the parser
 * itself, and the inputs are hostile: HTML the model writes, Telegram's own tags,
 * entity spellings, mention links in disguise, and half-written Markdown.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { MessageEntity } from "grammy/types";
import { markdownToTelegramHtml, telegramHtmlLength } from "../../src/bots/telegram/telegram-html.js";
import { splitMarkdownPieces } from "../../src/reply/message-splitter.js";
import { parseTelegramHtml, telegramTextLength, type ParsedText } from "../fakes/telegram-html.js";

/** Parses like the Bot API; a rejection fails the property with tdlib's message and the input. */
function parse(md: string): ParsedText {
  const html = markdownToTelegramHtml(md);
  try {
    return parseTelegramHtml(html);
  } catch (error) {
    throw new Error(
      `Telegram would reject ${JSON.stringify(html)} (from ${JSON.stringify(md)}): ${(error as Error).message}`,
    );
  }
}

/** Markup a model may write on purpose or by accident: none of it is Markdown. */
const HTML_TOKENS = [
  "<b>",
  "</b>",
  "<i>",
  "</code>",
  "<code>",
  "<pre>",
  "</pre>",
  "<u>",
  "<ins>",
  "<s>",
  '<a href="javascript:alert(1)">',
  "</a>",
  '<a href="tg://user?id=42">',
  "<tg-spoiler>",
  "</tg-spoiler>",
  '<tg-emoji emoji-id="5368324170671202286">',
  '<span class="tg-spoiler">',
  "<blockquote expandable>",
  "</blockquote>",
  "<script>",
  "<br>",
  "<p>",
  "&amp;",
  "&lt;",
  "&gt;",
  "&quot;",
  "&#60;b&#62;",
  "&#x3c;",
  "&nbsp;",
  "&",
  "<",
  '"',
  "'",
  "word",
  " ",
  "北京",
  "😀",
  "\n",
  "\t",
];
/** Markdown pieces, including ones that are only half written. */
const MD_TOKENS = [
  "**",
  "*",
  "__",
  "_",
  "~~",
  "||",
  "`",
  "```",
  "```ts\n",
  "\n```\n",
  "[",
  "]",
  "(",
  ")",
  "](",
  "](https://ex.com/?a=1&b=2)",
  "](javascript:alert(1))",
  "](tg://user?id=42)",
  "](tg:user?id=42)",
  "](TG://USER/?ID=42)",
  "](tg://user?x=1&id=42#f)",
  "](data:text/html,x)",
  "](mailto:a@b.c)",
  "<https://a.b/x>",
  "<tg://user?id=42>",
  "# ",
  "> ",
  "- ",
  "1. ",
  "---",
  "\\",
  "\\*",
  "\n\n",
  "x_y",
  "@everyone",
  "@test_bot",
];
const hostileHtmlArb = fc.array(fc.constantFrom(...HTML_TOKENS), { maxLength: 40 }).map((p) => p.join(""));
const markdownArb = fc.array(fc.constantFrom(...MD_TOKENS, ...HTML_TOKENS), { maxLength: 60 }).map((p) => p.join(""));

/** Entities model text may legitimately produce; everything else (mentions, custom emoji, links elsewhere) is an injection. */
function unexpectedEntities(entities: readonly MessageEntity[]): MessageEntity[] {
  return entities.filter((e) => {
    switch (e.type) {
      case "bold":
      case "italic":
      case "strikethrough":
      case "spoiler":
      case "code":
      case "pre":
      case "blockquote":
        return false;
      case "text_link":
        return !/^(https?:\/\/|mailto:)/i.test(e.url);
      default:
        return true; // text_mention, custom_emoji, underline from <u>, expandable_blockquote from the model, …
    }
  });
}

describe("hostile text through the renderer, judged by the tdlib-like parser", () => {
  it("HTML the model writes stays text: the user sees exactly what was written, with no entity at all", () => {
    fc.assert(
      fc.property(hostileHtmlArb, (md) => {
        const parsed = parse(md);
        expect(parsed.entities).toEqual([]);
        // Every character is shown literally (blank lines and the ends' whitespace are Markdown's and tdlib's to tidy).
        const words = (t: string) => t.replace(/\s+/g, " ").trim();
        expect(words(parsed.text)).toBe(words(md));
      }),
      { numRuns: 500 },
    );
  });

  it("random and half-written Markdown with hostile pieces: always accepted, never a mention or a foreign link", () => {
    fc.assert(
      fc.property(markdownArb, fc.nat(), (md, cutAt) => {
        for (const text of [md, md.slice(0, md.length === 0 ? 0 : cutAt % (md.length + 1))]) {
          const parsed = parse(text);
          expect(unexpectedEntities(parsed.entities)).toEqual([]);
          // Our own length measure agrees with Telegram's, so splitting decisions are right.
          expect(telegramHtmlLength(markdownToTelegramHtml(text))).toBeGreaterThanOrEqual(
            telegramTextLength(parsed.text),
          );
        }
      }),
      { numRuns: 600 },
    );
  });

  it("every spelling of a user mention link is shown as text, not as a mention", () => {
    const spellings = [
      "tg://user?id=42",
      "tg:user?id=42",
      "TG://USER?ID=42",
      "tg://user/?id=42",
      "tg://user?x=1&id=42",
      "tg://user?id=42#frag",
      "Tg:User?id=42",
    ];
    for (const url of spellings) {
      for (const md of [`[Alice](${url})`, `<${url}>`, `**[Alice](${url})**`]) {
        const parsed = parse(md);
        expect(
          parsed.entities.filter((e) => e.type === "text_mention"),
          `${md} → ${markdownToTelegramHtml(md)}`,
        ).toEqual([]);
      }
    }
  });

  it("arbitrary unicode (lone surrogates, controls, NUL) is always accepted", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 300 }), (md) => {
        parse(md);
      }),
      { numRuns: 400 },
    );
  });
});

describe("the splitter, judged by the tdlib-like parser", () => {
  const measure = (md: string) => telegramHtmlLength(markdownToTelegramHtml(md));
  it("no piece is refused or over the limit as Telegram counts it, and no character is lost", () => {
    fc.assert(
      fc.property(
        fc.oneof(markdownArb, fc.string({ unit: "grapheme", maxLength: 400 })),
        fc.integer({ min: 16, max: 200 }),
        (md, limit) => {
          const pieces = splitMarkdownPieces(md, { limit, measure });
          for (const piece of pieces) {
            const parsed = parse(piece.text);
            expect(telegramTextLength(parsed.text)).toBeLessThanOrEqual(limit);
          }
          expect(pieces.map((p) => md.slice(p.start, p.end)).join("")).toBe(md);
        },
      ),
      { numRuns: 250 },
    );
  });
});
