import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  markdownToTelegramHtml,
  telegramHtmlLength,
  telegramVisibleText,
} from "../../src/bots/telegram/telegram-html.js";
import { validateTelegramHtml } from "./telegram-html-validator.js";

const render = markdownToTelegramHtml;

describe("markdownToTelegramHtml", () => {
  it("renders the formatting a model writes", () => {
    expect(render("**bold** and *italic* and ~~gone~~ and `x < y`")).toBe(
      "<b>bold</b> and <i>italic</i> and <s>gone</s> and <code>x &lt; y</code>",
    );
    expect(render("__also bold__ _also italic_ ||secret||")).toBe(
      "<b>also bold</b> <i>also italic</i> <tg-spoiler>secret</tg-spoiler>",
    );
    expect(render("***both***")).toBe("<i><b>both</b></i>");
    expect(render("# Weather in 北京\nSunny")).toBe("<b>Weather in 北京</b>\nSunny");
  });

  it("renders fenced code with its language, escaped", () => {
    expect(render("Look:\n```ts\nif (a < b && c > d) {}\n```\nDone")).toBe(
      'Look:\n<pre><code class="language-ts">if (a &lt; b &amp;&amp; c &gt; d) {}</code></pre>\nDone',
    );
    expect(render("```\nplain\n```")).toBe("<pre>plain</pre>");
    expect(render("~~~python\nprint(1)\n~~~")).toBe('<pre><code class="language-python">print(1)</code></pre>');
  });

  it("renders links with a quoted, escaped href and only safe schemes", () => {
    expect(render('[the "docs"](https://example.com/a?b=1&c=2)')).toBe(
      '<a href="https://example.com/a?b=1&amp;c=2">the "docs"</a>',
    );
    expect(render("[mail](mailto:a@b.c) <https://x.org/y>")).toBe(
      '<a href="mailto:a@b.c">mail</a> <a href="https://x.org/y">https://x.org/y</a>',
    );
    expect(render("[click](javascript:alert(1))")).toBe("click");
    expect(render("[me](tg://user?id=42)")).toBe("me");
    expect(render("[file](file:///etc/passwd)")).toBe("file");
  });

  it("renders lists, quotes and rules", () => {
    expect(render("- one\n- **two**\n  - nested\n1. first\n- [x] done")).toBe(
      "• one\n• <b>two</b>\n  • nested\n1. first\n☑ done",
    );
    expect(render("> quoted **bold**\n> more\n\nafter")).toBe(
      "<blockquote>quoted <b>bold</b>\nmore</blockquote>\n\nafter",
    );
    expect(render("a\n\n---\n\nb")).toBe("a\n\n——————\n\nb");
  });

  it("escapes everything that is not Markdown, including HTML the model writes", () => {
    expect(render("<b>not a tag</b> & <script>")).toBe("&lt;b&gt;not a tag&lt;/b&gt; &amp; &lt;script&gt;");
    expect(render("AT&T 1 < 2 > 0 &amp;")).toBe("AT&amp;T 1 &lt; 2 &gt; 0 &amp;amp;");
  });

  it("keeps snake_case, arithmetic and lone markers literal", () => {
    expect(render("get_weather_now and 2 * 3 * 4 and a ~ b")).toBe("get_weather_now and 2 * 3 * 4 and a ~ b");
    expect(render("\\*not italic\\*")).toBe("*not italic*");
  });

  it("bolds Chinese text whose bold part ends in punctuation", () => {
    expect(render("**天气：**晴，**温度：**25°C")).toBe("<b>天气：</b>晴，<b>温度：</b>25°C");
  });

  it("keeps code out of formatting tags (Telegram refuses code inside bold)", () => {
    const html = render("**use `npm ci` now**");
    expect(html).toBe("<b>use </b><code>npm ci</code><b> now</b>");
    expect(validateTelegramHtml(html)).toEqual([]);
  });

  it("renders half-written constructs mid-stream as valid HTML", () => {
    expect(render("Here:\n```python\ndef f(x):\n    return x <")).toBe(
      'Here:\n<pre><code class="language-python">def f(x):\n    return x &lt;</code></pre>',
    );
    expect(render("this is **bold and still go")).toBe("this is **bold and still go");
    expect(render("see [the docs](htt")).toBe("see [the docs](htt");
    expect(render("see [the do")).toBe("see [the do");
    expect(render("an `unclosed code")).toBe("an `unclosed code");
    expect(render("||spoi")).toBe("||spoi");
    for (const md of ["```", "```py", "**", "[", "[a](", "> ", "# ", "- ", "<", "&", "~~x", "`"]) {
      expect(validateTelegramHtml(render(md)), md).toEqual([]);
    }
  });

  it("measures the visible length the way Telegram counts it", () => {
    const html = render("**a** & <b> `c`");
    expect(telegramVisibleText(html)).toBe("a & <b> c");
    expect(telegramHtmlLength(html)).toBe(9);
    // UTF-16 code units: an emoji counts two.
    expect(telegramHtmlLength(render("😀"))).toBe(2);
  });
});

// Property tests: Markdown assembled from the pieces models write (and break).
const tokens = [
  "**",
  "*",
  "__",
  "_",
  "~~",
  "~",
  "||",
  "`",
  "```",
  "```ts\n",
  "\n```\n",
  "~~~\n",
  "[",
  "]",
  "(",
  ")",
  "](",
  "](https://ex.com/?a=1&b=2)",
  "](javascript:x)",
  "<",
  ">",
  "&",
  "&amp;",
  '"',
  "\\",
  "\\*",
  "# ",
  "## ",
  "> ",
  "- ",
  "1. ",
  "---",
  "\n",
  "\n\n",
  " ",
  "  ",
  "word",
  "北京",
  "😀",
  "x_y",
  "<https://a.b>",
  "<b>",
  "</i>",
  "@everyone",
  "|",
  "\t",
];
const markdownArb = fc.array(fc.constantFrom(...tokens), { maxLength: 60 }).map((parts) => parts.join(""));

describe("markdownToTelegramHtml properties", () => {
  it("always yields HTML Telegram accepts, for random Markdown", () => {
    fc.assert(
      fc.property(markdownArb, (md) => {
        expect(validateTelegramHtml(render(md))).toEqual([]);
      }),
      { numRuns: 600 },
    );
  });

  it("always yields HTML Telegram accepts, for every prefix of a Markdown answer (mid-stream)", () => {
    fc.assert(
      fc.property(markdownArb, fc.nat(), (md, cut) => {
        const prefix = md.slice(0, md.length === 0 ? 0 : cut % (md.length + 1));
        expect(validateTelegramHtml(render(prefix))).toEqual([]);
      }),
      { numRuns: 400 },
    );
  });

  it("always yields HTML Telegram accepts, for arbitrary unicode text", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 200 }), (md) => {
        expect(validateTelegramHtml(render(md))).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it("loses no visible word: plain words survive rendering in order", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom("alpha", "beta", "北京", "x1", "**", "`", "_", "\n", " "), { maxLength: 40 }),
        (parts) => {
          const md = parts.join(" ");
          const visible = telegramVisibleText(render(md));
          const words = (s: string) => s.split(/[^A-Za-z0-9\u4e00-\u9fff]+/).filter(Boolean);
          expect(words(visible)).toEqual(words(md));
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe("the strict validator used above", () => {
  it("flags what Telegram would reject", () => {
    const bad = [
      "<b>unclosed",
      "<b><i>crossed</b></i>",
      "a < b",
      "AT&T",
      "<script>x</script>",
      '<a href="javascript:alert(1)">x</a>',
      "<a href=https://x.org>x</a>",
      "<b><code>x</code></b>",
      "<pre><b>x</b></pre>",
      "<blockquote><blockquote>x</blockquote></blockquote>",
      "<b></b>",
      '<code class="language-ts">x</code>',
    ];
    for (const html of bad) expect(validateTelegramHtml(html), html).not.toEqual([]);
    expect(
      validateTelegramHtml(
        '<pre><code class="language-ts">a &lt; b</code></pre> <a href="https://x.org/?a=1&amp;b">l</a>',
      ),
    ).toEqual([]);
  });
});
