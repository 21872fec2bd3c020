/** What the terminal shows of a reply: plain text, and the rows it takes at a width (wide characters count two). */
import { describe, expect, it } from "vitest";
import { plainText, screenRows } from "../../../src/bots/terminal/terminal-text.js";

describe("plainText", () => {
  it("drops Markdown escapes and emphasis, keeps code as written", () => {
    expect(plainText("✅ get\\_weather(北京)")).toBe("✅ get_weather(北京)");
    expect(plainText("Half\n\n⏹ _stopped_")).toBe("Half\n\n⏹ stopped");
    expect(plainText("**bold** and *it* and ~~gone~~, snake_case_name")).toBe("bold and it and gone, snake_case_name");
    expect(plainText("see [the docs](https://example.com/a)")).toBe("see the docs (https://example.com/a)");
    expect(plainText("run `a_b \\_ c`\n```sh\necho **x** \\_\n```\n")).toBe(
      "run a_b \\_ c\n```sh\necho **x** \\_\n```\n",
    );
  });
});

describe("screenRows", () => {
  it("counts screen columns: Chinese and emoji take two", () => {
    expect(screenRows("a".repeat(80), 80)).toBe(1);
    expect(screenRows("a".repeat(81), 80)).toBe(2);
    expect(screenRows("北".repeat(40), 80)).toBe(1);
    expect(screenRows("北".repeat(41), 80)).toBe(2);
    expect(screenRows(`🤖 ${"x".repeat(77)}`, 80)).toBe(1);
    expect(screenRows(`🤖 ${"x".repeat(78)}`, 80)).toBe(2);
  });

  it("moves a wide character that does not fit the last column to the next row, and counts empty lines", () => {
    expect(screenRows(`${"a".repeat(79)}北${"b".repeat(78)}`, 80)).toBe(2);
    expect(screenRows(`${"a".repeat(79)}北${"b".repeat(79)}`, 80)).toBe(3);
    expect(screenRows("one\n\nthree", 80)).toBe(3);
  });
});
