/**
 * MODEL_SERVER=ollama end to end (issue 30, item 4): the fake Telegram Bot API, the bots and worker
 * roles in-process on real Redis, and a fake Ollama that follows Ollama's API docs (NDJSON on
 * `/api/chat`, tool calls whole in one line, `done_reason`, `/api/show`). The seed's two questions
 * (parallel weather; news, then read_url), a photo (sent in `images`), thinking on and off, and
 * `/stop` all work; every request goes to `/api/chat` (none to `/v1/chat/completions`) and carries
 * `options.num_ctx` (the Modelfile's num_ctx from `/api/show`, the figure the budget counts with)
 * and `keep_alive`.
 */
import { describe, expect } from "vitest";
import { privateChat, type FakeTelegram, type FakeUser } from "../fakes/telegram-server.js";
import { startFakeOllama, type FakeOllama, type OllamaPlan, type OllamaRequest } from "../fakes/ollama-server.js";
import type { FakeWeb } from "../fakes/web-server.js";
import { e2eTest, type E2EFixtures } from "../support/fixtures.js";
import { twoColourPhoto } from "../support/test-images.js";
import { within } from "./telegram-harness.js";

const alice: FakeUser = { id: 1001, first_name: "Alice" };
/** The Modelfile's num_ctx the fake's `/api/show` reports: every request must carry it. */
const NUM_CTX = 12288;
const STORY = Array.from({ length: 60 }, (_, i) => `Once upon a time robot number ${i + 1} woke up.`).join(" ");

type Message = { role: string; content: string; images?: string[]; tool_name?: string; tool_calls?: unknown[] };

/** The newest user message of a request and the tool results that came after it. */
function turnOf(request: OllamaRequest): { question: Message; results: Message[] } {
  const messages = request.body.messages as Message[];
  const at = messages.findLastIndex((m) => m.role === "user");
  return { question: messages[at] as Message, results: messages.slice(at + 1).filter((m) => m.role === "tool") };
}

/** A Qwen3-like model on Ollama: calls the seed's tools, describes pictures, tells long stories. */
function ollamaModel(web: () => FakeWeb): (request: OllamaRequest) => OllamaPlan {
  return (request) => {
    const { question, results } = turnOf(request);
    if (question.images?.length) return { thinking: "A picture.", content: "A red and blue picture." };
    if (/天气/.test(question.content)) {
      if (results.length === 0)
        return {
          thinking: "Two cities: two calls at once.",
          toolCalls: [
            { name: "get_weather", arguments: { city: "Beijing" } },
            { name: "get_weather", arguments: { city: "Shanghai" } },
          ],
        };
      const temps = results.map((r) => JSON.parse(r.content).temperature_c);
      return { thinking: "Compare them.", content: `北京 ${temps[0]}°C，上海 ${temps[1]}°C。` };
    }
    if (/news/i.test(question.content)) {
      if (results.length === 0) return { toolCalls: [{ name: "get_news", arguments: { topic: "AI" } }] };
      if (results.length === 1)
        return { toolCalls: [{ name: "read_url", arguments: { url: `${web().url}/article/1?q=AI` } }] };
      return { thinking: "Summarise the story.", content: "A lab released a small model that runs on laptops." };
    }
    if (/story/i.test(question.content)) return { content: STORY, gapMs: 25 };
    return { content: "Hello!" };
  };
}

/** The fake Ollama, the fake web and Telegram, and the bot with MODEL_SERVER=ollama. */
async function startOllamaBot(
  fixtures: Pick<E2EFixtures, "fakeTelegram" | "fakeWeb" | "startStack" | "closeAfter">,
  capabilities = ["completion", "tools", "thinking", "vision"],
): Promise<{ tg: FakeTelegram; ollama: FakeOllama; web: FakeWeb }> {
  const tg = await fixtures.fakeTelegram();
  const web = await fixtures.fakeWeb();
  const ollama = fixtures.closeAfter(
    await startFakeOllama({ answer: ollamaModel(() => web), capabilities, numCtx: NUM_CTX }),
  );
  await fixtures.startStack({
    env: {
      TELEGRAM_BOT_TOKEN: tg.token,
      TELEGRAM_API_ROOT: tg.apiRoot,
      OPENAI_BASE_URL: ollama.url,
      OPENAI_API_KEY: "ollama",
      MODEL: "qwen3:1.7b",
      MODEL_SERVER: "ollama",
      WEATHER_API_BASE: web.url,
      NEWS_RSS_URL: `${web.url}/rss?q={query}`,
      READ_URL_ALLOW_HOSTS: web.host,
    },
  });
  return { tg, ollama, web };
}

/** Every request went to `/api/chat` with the context the budget counts with, and kept the model loaded. */
function expectNativeRequests(ollama: FakeOllama): void {
  expect(ollama.requests.length).toBeGreaterThan(0);
  for (const request of ollama.requests) {
    expect(request.body.options?.num_ctx, `request ${request.index}'s num_ctx`).toBe(NUM_CTX);
    expect(request.body.keep_alive).toBe("30m");
  }
  expect(ollama.openAiRequests.filter((path) => path.includes("chat/completions"))).toEqual([]);
  expect(ollama.shows).toContain("qwen3:1.7b");
}

/** Waits until the bot's last message shows `text` (tool answers start with their tool lines). */
async function answered(tg: FakeTelegram, text: string, what: string): Promise<void> {
  await tg.waitFor(() => tg.botMessages(alice.id).at(-1)?.text.includes(text), { timeoutMs: 15_000, what });
}

describe("MODEL_SERVER=ollama, end to end through Telegram", () => {
  e2eTest(
    "the seed's two questions with thinking on, then off: parallel weather, news then read_url",
    // Five model rounds and three paced replies, with Qwen3's tokenizer loading in process (Ollama has no /tokenize).
    { timeout: 45_000 },
    async ({ fakeTelegram, fakeWeb, startStack, closeAfter }) => {
      const { tg, ollama } = await startOllamaBot({ fakeTelegram, fakeWeb, startStack, closeAfter });
      const chat = privateChat(alice);

      tg.userSays(chat, alice, "北京和上海今天的天气怎么样？");
      await answered(tg, "北京 31°C，上海 26°C。", "the weather answer");
      expect(ollama.requests).toHaveLength(2);
      const calls = ollama.requests[1]?.body.messages.find((m: Message) => m.tool_calls);
      expect(calls.tool_calls).toEqual([
        { function: { name: "get_weather", arguments: { city: "Beijing" } } },
        { function: { name: "get_weather", arguments: { city: "Shanghai" } } },
      ]);
      // Both results went back, each named by its tool (Ollama has no call ids).
      expect(turnOf(ollama.requests[1] as OllamaRequest).results.map((r) => r.tool_name)).toEqual([
        "get_weather",
        "get_weather",
      ]);
      expect(ollama.requests.map((r) => r.body.think)).toEqual([true, true]);
      // The reasoning is not the answer.
      expect(tg.visibleText(alice.id)).not.toContain("Compare them.");

      tg.userSays(chat, alice, "/think off");
      await answered(tg, "✅ Thinking is now off here.", "the /think reply");
      tg.userSays(chat, alice, "What is the news about AI? Read me the top story.");
      await answered(tg, "A lab released a small model that runs on laptops.", "the news answer");
      const news = ollama.requests.slice(2);
      expect(news.map((r) => r.body.think)).toEqual([false, false, false]);
      const read = turnOf(news[2] as OllamaRequest).results;
      expect(read.map((r) => r.tool_name)).toEqual(["get_news", "read_url"]);
      expect(read[1]?.content).toContain("released a small open model");
      expect(news.every((r) => r.body.tools.some((t: any) => t.function.name === "read_url"))).toBe(true);
      // Every answer ended the way Ollama ends one: done with done_reason "stop" (nothing cut for length).
      expect(tg.visibleText(alice.id)).not.toMatch(/cut|⚠️/);
      expectNativeRequests(ollama);
      // One /api/show for the process: the budget and all five requests share its answer.
      expect(ollama.shows).toEqual(["qwen3:1.7b"]);
    },
  );

  e2eTest(
    "a photo goes to Ollama in `images`, the caption beside it",
    async ({ fakeTelegram, fakeWeb, startStack, closeAfter }) => {
      const { tg, ollama } = await startOllamaBot({ fakeTelegram, fakeWeb, startStack, closeAfter });
      const { message } = await tg.userSendsFile(privateChat(alice), alice, {
        kind: "photo",
        bytes: await twoColourPhoto(800, 600),
        caption: "What is in this picture?",
      });
      await answered(tg, "A red and blue picture.", "the picture answer");
      const { question } = turnOf(ollama.requests[0] as OllamaRequest);
      expect(question.content).toBe(`What is in this picture?\n[image: photo-${message.message_id}.jpg]`);
      expect(question.images).toHaveLength(1);
      // Bare base64 of a JPEG (Ollama takes no data: URL).
      expect(Buffer.from(question.images?.[0] ?? "", "base64").subarray(0, 3)).toEqual(Buffer.from([0xff, 0xd8, 0xff]));
      expectNativeRequests(ollama);
    },
  );

  e2eTest(
    "a model whose /api/show lists no vision gets no picture, and the text says so",
    async ({ fakeTelegram, fakeWeb, startStack, closeAfter }) => {
      const { tg, ollama } = await startOllamaBot({ fakeTelegram, fakeWeb, startStack, closeAfter }, [
        "completion",
        "tools",
        "thinking",
      ]);
      await tg.userSendsFile(privateChat(alice), alice, {
        kind: "photo",
        bytes: await twoColourPhoto(800, 600),
        caption: "What is in this picture?",
      });
      await tg.waitFor(() => ollama.requests[0], { timeoutMs: 15_000, what: "the model request" });
      const { question } = turnOf(ollama.requests[0] as OllamaRequest);
      expect(question.images).toBeUndefined();
      expect(question.content).toMatch(/\(not shown: this model cannot see images\)\]$/);
      expectNativeRequests(ollama);
    },
  );

  e2eTest(
    "/stop ends the answer being written and closes the /api/chat stream",
    async ({ fakeTelegram, fakeWeb, startStack, closeAfter }) => {
      const { tg, ollama } = await startOllamaBot({ fakeTelegram, fakeWeb, startStack, closeAfter });
      const chat = privateChat(alice);
      tg.userSays(chat, alice, "Tell me a long story.");
      const story = await tg.waitFor(() => ollama.requests[0], { what: "the story request" });
      await tg.waitFor(() => tg.draft(alice.id)?.text.startsWith("Once upon a time"), {
        timeoutMs: 10_000,
        what: "the story streaming",
      });
      tg.userSays(chat, alice, "/stop");
      expect(await within(story.outcome, 3000, "the /api/chat stream closing after /stop")).toBe("client-closed");
      const stopped = await tg.waitFor(
        () => tg.botMessages(alice.id).find((m) => m.text.startsWith("Once upon a time")),
        { timeoutMs: 5000, what: "the stopped answer" },
      );
      expect(stopped.text).toMatch(/⏹ stopped$/);
      expect(stopped.text.length).toBeLessThan(STORY.length / 2);
      expectNativeRequests(ollama);
    },
  );
});
