/**
 * Token counts come from the model's own tokenizer: llama.cpp's `/tokenize` (here the fake
 * server, which answers with Qwen3's real tokenizer), else Qwen3's tokenizer in process, else the
 * estimate. The counts are checked against known Qwen3 token ids and against `prompt_tokens`
 * that a real llama-server reported for captured requests.
 */
import { readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import type { ChatMessage } from "../../src/contracts/chat-message.js";
import { createQwen3Tokenizer } from "../../src/tokens/qwen3-tokenizer.js";
import { createServerTokenizer, serverRootOf } from "../../src/tokens/server-tokenizer.js";
import { createTokenCounter } from "../../src/tokens/token-counter.js";
import type { TextTokenizer } from "../../src/tokens/text-tokenizer.js";
import { countPromptTokens } from "../fakes/llama-extras.js";
import { startFakeOpenAI, type FakeOpenAI } from "../fakes/openai-server.js";

const fixture = (name: string): string =>
  readFileSync(new URL(`../agent/fixtures/llama-server/${name}`, import.meta.url), "utf8");
const promptTokensOf = (sse: string): number => Number(/"prompt_tokens":(\d+)/.exec(sse)?.[1]);

let fake: FakeOpenAI | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

/** A fetch that counts the requests it passes on. */
function countingFetch(): { fetch: typeof fetch; calls: string[] } {
  const calls: string[] = [];
  return {
    calls,
    fetch: (input, init) => {
      calls.push(String(input));
      return fetch(input, init);
    },
  };
}

const ENGLISH = "Hello, how are you today?";
const CHINESE = "北京今天天气怎么样？";

describe("token counts", () => {
  it("match Qwen3's tokenizer on an English and a Chinese sample, through llama.cpp's /tokenize and in process", async () => {
    fake = await startFakeOpenAI();
    // The fake loads its Qwen3 vocabulary on the first /tokenize: give that cold start room (deadlines are tested elsewhere).
    const server = createServerTokenizer({ serverRoot: serverRootOf(fake.url), timeoutMs: 30_000 });
    const local = createQwen3Tokenizer();
    // Qwen3 ids: Hello , how are you today ? = 9707 11 1246 525 498 3351 30; 北京 今天 天气 怎么样 ？ = 5 tokens.
    expect(await server.count(ENGLISH)).toBe(7);
    expect(await local.count(ENGLISH)).toBe(7);
    expect(await server.count(CHINESE)).toBe(5);
    expect(await local.count(CHINESE)).toBe(5);
    // Special tokens of the chat template count as one each.
    expect(await local.count("<|im_start|>user\nhi<|im_end|>")).toBe(5);
    const mixed = "用户问：What's the weather in 上海 tomorrow? 明天会下雨吗？ Temperature 18°C, wind 3 m/s.";
    expect(await server.count(mixed)).toBe(await local.count(mixed));
    // The estimate would have said otherwise (one token per Chinese character).
    const estimate = createTokenCounter({ tokenizers: [] });
    expect(await estimate.countText(CHINESE)).toBe(10);
  });

  it("a request's count equals the prompt_tokens a real llama-server reported for it", async () => {
    const counter = createTokenCounter({ tokenizers: [createQwen3Tokenizer()] });
    // "Hi": 9 tokens (fixture 02).
    const hi = await counter.countMessage({ role: "user", content: "Hi" });
    expect(hi + (await counter.countTools([]))).toBe(
      promptTokensOf(fixture("scripted-chat_02_plain_stream_usage.sse")),
    );
    // The fake's own rendering of the template is held to the same captures, tools and a tool round included.
    for (const name of [
      "scripted-tool1_06_tools_required_parallel_stream",
      "scripted-tool1_10_tool_loop_round2_stream",
    ]) {
      const body = JSON.parse(fixture(`${name}.request.json`));
      expect(await countPromptTokens(body)).toBe(promptTokensOf(fixture(`${name}.sse`)));
    }
  });

  it("counts a request with system prompt, tools and a tool round as the template renders it", async () => {
    const counter = createTokenCounter({ tokenizers: [createQwen3Tokenizer()] });
    const tools = JSON.parse(fixture("tools.json")) as unknown[];
    const messages: ChatMessage[] = [
      { role: "system", content: "You are a helpful assistant. Answer briefly." },
      { role: "user", content: "Alice: 巴黎天气怎么样？" },
      {
        role: "assistant",
        content: "",
        tool_calls: [{ id: "c1", type: "function", function: { name: "get_weather", arguments: '{"city": "Paris"}' } }],
      },
      { role: "tool", tool_call_id: "c1", content: '{"temp_c": 18, "condition": "cloudy"}' },
      { role: "assistant", content: "巴黎现在 18°C，多云。" },
      { role: "user", content: "Bob: and tomorrow?" },
    ];
    let ours = await counter.countTools(tools);
    for (const m of messages) ours += await counter.countMessage(m);
    const theirs = await countPromptTokens({ messages, tools });
    // Counted apart, the system prompt's last "." and the tools section's "\n\n" are two tokens; rendered together
    // Qwen3 merges them into one. So the per-part count may be one token generous, never short.
    expect(ours - theirs).toBeGreaterThanOrEqual(0);
    expect(ours - theirs).toBeLessThanOrEqual(1);
  });

  it("falls back to Qwen3 in process when the server has no /tokenize, and asks it only once", async () => {
    fake = await startFakeOpenAI({ llama: { tokenize: false } });
    const { fetch, calls } = countingFetch();
    const fallbacks: string[] = [];
    const counter = createTokenCounter({
      tokenizers: [createServerTokenizer({ serverRoot: serverRootOf(fake.url), fetch }), createQwen3Tokenizer()],
      onFallback: (from) => fallbacks.push(from),
    });
    expect(await counter.countText(ENGLISH)).toBe(7);
    expect(await counter.countText(CHINESE)).toBe(5);
    expect(counter.source).toBe("qwen3");
    expect(calls).toHaveLength(1);
    expect(fallbacks).toEqual(["server"]);
  });

  it("uses the estimate when no tokenizer works, and tries a flaky server again after a while", async () => {
    let t = 0;
    let serverUp = false;
    const flaky: TextTokenizer = {
      source: "server",
      count: async (text) => {
        if (!serverUp)
          throw new (await import("../../src/tokens/server-tokenizer.js")).TokenizeError("HTTP 503", false);
        return text.length;
      },
    };
    const broken: TextTokenizer = { source: "qwen3", count: async () => Promise.reject(new Error("package missing")) };
    const counter = createTokenCounter({ tokenizers: [flaky, broken], now: () => t, backoffMs: 1000 });
    expect(await counter.countText("abcdefgh")).toBe(2); // the estimate: four characters a token
    expect(counter.source).toBe("estimate");
    serverUp = true;
    expect(await counter.countText("abcdefghijkl")).toBe(3); // still backing off
    t = 1001;
    expect(await counter.countText("abcdefghijklmnop")).toBe(16);
    expect(counter.source).toBe("server");
  });

  it("does not load Qwen3 in process (about 180 MB) while a busy server's /tokenize only backs off", async () => {
    let t = 0;
    let serverUp = false;
    const busy: TextTokenizer = {
      source: "server",
      count: async (text) => {
        if (!serverUp)
          throw new (await import("../../src/tokens/server-tokenizer.js")).TokenizeError("timed out", false);
        return text.length;
      },
    };
    const loads: string[] = [];
    const inProcess: TextTokenizer = {
      source: "qwen3",
      isReady: () => false,
      warm: async () => {
        loads.push("warm");
        return true;
      },
      count: async (text) => {
        loads.push("count");
        return text.length;
      },
    };
    const counter = createTokenCounter({ tokenizers: [busy, inProcess], now: () => t, backoffMs: 1000 });
    expect(await counter.countText("abcdefgh")).toBe(2); // the estimate, after the timeout
    expect(await counter.countText("abcdefgh")).toBe(2); // still the estimate, not remembered
    expect(loads).toEqual([]);
    serverUp = true;
    t = 1001;
    expect(await counter.countText("abcdefgh")).toBe(8);
    expect(counter.source).toBe("server");
    expect(loads).toEqual([]);
  });

  it("counts each text once (cached), so a message is never sent to /tokenize twice", async () => {
    fake = await startFakeOpenAI();
    const { fetch, calls } = countingFetch();
    const counter = createTokenCounter({
      tokenizers: [createServerTokenizer({ serverRoot: serverRootOf(fake.url), fetch })],
    });
    const message: ChatMessage = { role: "user", content: CHINESE };
    const first = await counter.countMessage(message);
    expect(await counter.countMessage({ ...message })).toBe(first);
    expect(first).toBe(5 + 5); // content + <|im_start|>user\n … <|im_end|>\n
    expect(calls).toHaveLength(1);
  });
});

describe("an implausible count (issue 36, item 9)", () => {
  it("is not believed: the next tokenizer answers, and the liar is skipped for a while", async () => {
    let asked = 0;
    const liar: TextTokenizer = {
      source: "server",
      count: async () => {
        asked++;
        return 2_000_000;
      },
    };
    const zero: TextTokenizer = { source: "qwen3", count: async () => 0 };
    const fallbacks: string[] = [];
    const counter = createTokenCounter({
      tokenizers: [liar, zero],
      onFallback: (from, error) => fallbacks.push(`${from}: ${(error as Error).message}`),
    });
    // Both lie (millions for a sentence, nothing for a paragraph): the estimate answers.
    expect(await counter.countText(ENGLISH)).toBe(7);
    expect(await counter.countText("x".repeat(400))).toBe(100);
    expect(fallbacks[0]).toMatch(/^server: server tokenizer counted 2000000 tokens for 25 characters/);
    expect(asked).toBe(1);
  });
});
