import { describe, expect, it } from "vitest";
import { threadNameFor } from "../../../src/bots/discord/discord-threads.js";

describe("threadNameFor", () => {
  it("puts the question on one line", () => {
    expect(threadNameFor("  how do\n\nI   deploy?  ")).toBe("how do I deploy?");
  });

  it("cuts a long question to 100 characters ending with an ellipsis, counting emoji as one", () => {
    const name = threadNameFor(`${"🚀".repeat(150)}`);
    expect([...name]).toHaveLength(100);
    expect(name.endsWith("…")).toBe(true);
  });

  it("names a question without text (an image alone)", () => {
    expect(threadNameFor("")).toBe("Question");
  });
});
