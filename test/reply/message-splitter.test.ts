import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fenceAfter } from "../../src/shared/code-fence.js";
import { toDiscordMarkdown } from "../../src/bots/discord/discord-markdown.js";
import { markdownToTelegramHtml, telegramHtmlLength } from "../../src/bots/telegram/telegram-html.js";
import { splitMarkdown, splitMarkdownPieces } from "../../src/reply/message-splitter.js";
import { validateTelegramHtml } from "./telegram-html-validator.js";

const plain = (md: string) => md.length;
const telegram = (md: string) => telegramHtmlLength(markdownToTelegramHtml(md));
const discord = (md: string) => toDiscordMarkdown(md).length;

const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff;

describe("splitMarkdown", () => {
  it("keeps a text that fits in one piece", () => {
    expect(splitMarkdown("short answer", { limit: 100, measure: plain })).toEqual(["short answer"]);
    expect(splitMarkdown("", { limit: 100, measure: plain })).toEqual([]);
  });

  it("cuts at a paragraph before a line, a line before a sentence, a sentence before a word", () => {
    const para = "First paragraph is here.\n\nSecond one follows here. And more words";
    expect(splitMarkdown(para, { limit: 40, measure: plain })[0]).toBe("First paragraph is here.\n\n");

    const lines = "line one is long\nline two is long too, yes";
    expect(splitMarkdown(lines, { limit: 30, measure: plain })[0]).toBe("line one is long\n");

    const sentences = "One sentence here. Another sentence that goes on";
    expect(splitMarkdown(sentences, { limit: 30, measure: plain })[0]).toBe("One sentence here. ");

    const chinese = "今天北京晴。明天有雨，记得带伞出门哦";
    expect(splitMarkdown(chinese, { limit: 12, measure: plain })[0]).toBe("今天北京晴。");

    const words = "aaaa bbbb cccc dddd eeee";
    expect(splitMarkdown(words, { limit: 12, measure: plain })[0]).toBe("aaaa bbbb ");
  });

  it("cuts hard only when there is no boundary, and never inside a surrogate pair", () => {
    const emoji = "😀".repeat(10);
    const pieces = splitMarkdown(emoji, { limit: 5, measure: plain });
    expect(pieces.join("")).toBe(emoji);
    for (const p of pieces) {
      expect(p.length).toBeLessThanOrEqual(5);
      expect(p.length % 2).toBe(0);
    }
  });

  it("closes a code fence at the cut and reopens it with its language", () => {
    const md = `Intro\n\`\`\`python\n${Array.from({ length: 12 }, (_, i) => `print(${i})`).join("\n")}\n\`\`\`\nOutro`;
    const pieces = splitMarkdown(md, { limit: 60, measure: plain });
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces[0]).toMatch(/\n```$/);
    expect(pieces[1]).toMatch(/^```python\n/);
    for (const p of pieces) expect(fenceAfter(p)).toBeUndefined();
  });

  it("measures after formatting (Telegram counts visible characters, not markup)", () => {
    // 30 bold words: the Markdown is much longer than what Telegram counts.
    const md = Array.from({ length: 30 }, () => "**word**").join(" ");
    const pieces = splitMarkdown(md, { limit: 100, measure: telegram });
    expect(pieces.length).toBe(2);
    for (const p of pieces) expect(telegram(p)).toBeLessThanOrEqual(100);
  });

  it("refuses a limit too small for a single character", () => {
    const open = { marker: "```", info: "js", lang: "js" };
    expect(() => splitMarkdown("more code", { limit: 8, measure: plain, openFence: open })).toThrow(RangeError);
  });
});

const tokens = [
  "word ",
  "北京",
  "😀",
  ". ",
  "。",
  "\n",
  "\n\n",
  "```js\n",
  "```\n",
  "\n```\n",
  "~~~\n",
  "**",
  "`",
  "[a](https://x.org)",
  "- item\n",
  "> quote\n",
  "<",
  "&",
  "long-token-without-spaces",
  "  ",
  "# Title\n",
];
const markdownArb = fc.array(fc.constantFrom(...tokens), { maxLength: 200 }).map((parts) => parts.join(""));

describe("splitMarkdown properties", () => {
  for (const [name, measure] of [
    ["plain", plain],
    ["telegram", telegram],
    ["discord", discord],
  ] as const) {
    it(`${name}: every piece fits, fences are balanced, no character is lost, surrogates stay whole`, () => {
      fc.assert(
        fc.property(markdownArb, fc.integer({ min: 24, max: 300 }), (md, limit) => {
          const pieces = splitMarkdownPieces(md, { limit, measure });
          let pos = 0;
          for (const piece of pieces) {
            expect(measure(piece.text)).toBeLessThanOrEqual(limit);
            expect(fenceAfter(piece.text)).toBeUndefined();
            expect(piece.start).toBe(pos);
            expect(piece.end).toBeGreaterThan(piece.start);
            expect(piece.text).toBe(piece.prefix + md.slice(piece.start, piece.end) + piece.suffix);
            expect(isHigh(md.charCodeAt(piece.end - 1)) && isLow(md.charCodeAt(piece.end))).toBe(false);
            if (name === "telegram") expect(validateTelegramHtml(markdownToTelegramHtml(piece.text))).toEqual([]);
            pos = piece.end;
          }
          expect(pos).toBe(md.length);
          expect(pieces.map((p) => md.slice(p.start, p.end)).join("")).toBe(md);
        }),
        { numRuns: name === "plain" ? 300 : 120 },
      );
    });
  }
});
