/**
 * The last-line defence against secrets in chat messages: the scrubber finds
 * whole secrets and long pieces of them, and the port wrapper keeps them out
 * of every text that reaches a platform, including what markup would join.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { createSecretScrubber, REDACTED } from "../../src/security/secret-scrubber.js";
import { withSecretsScrubbed } from "../../src/answer/secret-scrubbing-port.js";
import { markdownToTelegramHtml, telegramVisibleText } from "../../src/bots/telegram/telegram-html.js";
import { toDiscordMarkdown } from "../../src/bots/discord/discord-markdown.js";
import type { RenderedText, ReplyPort } from "../../src/contracts/reply-port.js";
import { parseTelegramHtml } from "../fakes/telegram-html.js";

const TG_TOKEN = "7000000001:AAHk3c9Qx_Vb-2LmNpQrStUvWxYz0123456";
const DC_TOKEN = "MTEwMDAwMDAwMDAwMDAwMDAwMg.GhT3xQ.kLmN0pQrStUvWxYz-0123456789abcdEF";
const API_KEY = "sk-proj-9f8e7d6c5b4a39281706f5e4d3c2b1a0";
const scrubber = createSecretScrubber([TG_TOKEN, DC_TOKEN, API_KEY, undefined, "ollama"]);

describe("secret scrubber", () => {
  it("replaces whole secrets wherever they appear", () => {
    expect(scrubber.scrub(`token=${TG_TOKEN}; key "${API_KEY}"`)).toBe(`token=${REDACTED}; key "${REDACTED}"`);
    expect(scrubber.scrub(`https://api.telegram.org/bot${TG_TOKEN}/getMe`)).toBe(
      `https://api.telegram.org/bot${REDACTED}/getMe`,
    );
  });

  it("catches a secret cut short, or only its secret half, or split in two by markup", () => {
    expect(scrubber.scrub(`bot${TG_TOKEN.slice(0, 30)}…`)).toBe(`bot${REDACTED}…`);
    expect(scrubber.scrub(`the secret part is ${TG_TOKEN.split(":")[1]}`)).toBe(`the secret part is ${REDACTED}`);
    expect(scrubber.scrub(`${DC_TOKEN.slice(0, 30)}**${DC_TOKEN.slice(30)}**`)).toBe(`${REDACTED}**${REDACTED}**`);
    expect(scrubber.has(`${API_KEY.slice(5, 17)}`)).toBe(true);
  });

  it("leaves ordinary text and placeholder keys alone", () => {
    const text = "Install ollama, set OPENAI_API_KEY=ollama, then ask: 北京天气? 7000000001 is the bot's public id.";
    expect(scrubber.scrub(text)).toBe(text);
    expect(scrubber.has(text)).toBe(false);
  });

  it("sees through formatting characters in the loose check", () => {
    const chopped = TG_TOKEN.match(/.{1,5}/g)!.join("**");
    expect(scrubber.has(chopped)).toBe(false);
    expect(scrubber.hasLoosely(chopped)).toBe(true);
  });

  it("property: no run of 12+ secret characters survives, and text without secrets is unchanged", () => {
    const secrets = [TG_TOKEN, DC_TOKEN, API_KEY];
    const filler = fc.string({
      unit: fc.constantFrom("a", "b", " ", "\n", "*", "北", "😀", ":", "-", "_"),
      maxLength: 30,
    });
    const piece = fc.tuple(fc.constantFrom(...secrets), fc.nat(), fc.nat()).map(([s, a, b]) => {
      const from = a % s.length;
      return s.slice(from, from + 12 + (b % (s.length - from + 1)));
    });
    fc.assert(
      fc.property(fc.array(fc.tuple(filler, fc.option(piece, { nil: undefined })), { maxLength: 6 }), (parts) => {
        const text = parts.map(([f, p]) => f + (p ?? "")).join("");
        const out = scrubber.scrub(text);
        // Matching ignores ASCII case (an upper-cased token is as good as the token), and so does this oracle: two
        // pieces may join into a run of a secret in another case ("…dEF" + "5e4d…" holds the API key's "f5e4d…").
        const grams = secrets.flatMap((s) =>
          Array.from({ length: s.length - 11 }, (_, i) => s.slice(i, i + 12).toLowerCase()),
        );
        for (const gram of grams) expect(out.toLowerCase().includes(gram)).toBe(false);
        if (!grams.some((gram) => text.toLowerCase().includes(gram))) expect(out).toBe(text);
      }),
      { numRuns: 300 },
    );
  });
});

/** A port that renders like the Telegram port and records what it was asked to send. */
function telegramLikePort(): ReplyPort & { sent: RenderedText[] } {
  const sent: RenderedText[] = [];
  return {
    sent,
    limits: { maxLength: 4096, minEditIntervalMs: 0 },
    format: (md) => ({ text: markdownToTelegramHtml(md), parseMode: "HTML" }),
    visibleText: (content) => (content.parseMode === "HTML" ? telegramVisibleText(content.text) : content.text),
    send: async (content) => {
      sent.push(content);
      return String(sent.length);
    },
    edit: async (_id, content) => void sent.push(content),
    draft: async (_id, content) => void sent.push(content),
  };
}

describe("a port wrapped with the scrubber", () => {
  it("renders the model's secret as [redacted], in HTML Telegram accepts", () => {
    const port = withSecretsScrubbed(telegramLikePort(), scrubber);
    const rendered = port.format(`Sure! The token is \`${TG_TOKEN}\` and the key **${API_KEY}**.`);
    const parsed = parseTelegramHtml(rendered.text);
    expect(parsed.text).toBe(`Sure! The token is ${REDACTED} and the key ${REDACTED}.`);
  });

  it("catches a secret that only markup joins together (each piece too short to notice)", () => {
    const port = withSecretsScrubbed(telegramLikePort(), scrubber);
    const chopped = TG_TOKEN.match(/.{1,6}/g)!
      .map((p, i) => (i % 2 ? `**${p}**` : p))
      .join("");
    const rendered = port.format(`here: ${chopped}`);
    const visible = parseTelegramHtml(rendered.text).text;
    expect(scrubber.hasLoosely(visible)).toBe(false);
    expect(visible).toContain(REDACTED);
  });

  it("scrubs what reaches send, edit and draft even when it did not come through format", async () => {
    const inner = telegramLikePort();
    const port = withSecretsScrubbed(inner, scrubber);
    await port.send({ text: `<b>${API_KEY}</b>`, parseMode: "HTML" }, {});
    await port.edit("1", { text: `x ${DC_TOKEN}` }, {});
    await port.draft!(7, { text: TG_TOKEN.slice(3) }, {});
    expect(inner.sent.map((c) => c.text)).toEqual([`<b>${REDACTED}</b>`, `x ${REDACTED}`, REDACTED]);
  });

  it("keeps Discord mentions defused and limits live (a getter, not a copy)", () => {
    let interval = 1000;
    const inner: ReplyPort = {
      get limits() {
        return { maxLength: 2000, minEditIntervalMs: interval };
      },
      format: (md) => ({ text: toDiscordMarkdown(md) }),
      send: async () => "1",
      edit: async () => undefined,
    };
    const port = withSecretsScrubbed(inner, scrubber);
    expect(port.format(`@everyone ${DC_TOKEN}`).text).toBe(`@\u200Deveryone ${REDACTED}`);
    interval = 1250;
    expect(port.limits.minEditIntervalMs).toBe(1250);
    expect(port.draft).toBeUndefined();
  });

  it("changes nothing in answers without secrets", () => {
    const port = withSecretsScrubbed(telegramLikePort(), scrubber);
    const md = "**北京** 31°C, `code`, [link](https://example.org/a_b) and snake_case_name.";
    expect(port.format(md)).toEqual({ text: markdownToTelegramHtml(md), parseMode: "HTML" });
    expect(telegramVisibleText(port.format(md).text)).toContain("snake_case_name");
  });
});
