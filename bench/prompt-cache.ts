/**
 * Prompt tokens the model server reads per turn, and the share it reuses from its cache (issue 30):
 * one private conversation of twelve turns a minute apart (the process clock is moved, so the
 * system prompt's date or time moves as it would), with a tool round every fourth turn and a
 * small history budget so old turns are folded into the summary. The real answer path (agent
 * loop, token counter, budget, compactor, Redis) runs in this process against the fake
 * llama-server with its slots and prompt cache on (`test/fakes/llama-slots.ts`: Qwen3's chat
 * template and tokenizer, llama-server's longest-common-prefix reuse), and every figure is the
 * `timings.prompt_n`/`cache_n` the fake reported.
 */
import { Redis } from "ioredis";
import { pino } from "pino";
import { createModelClient } from "../src/agent/model-client.js";
import { runAgent } from "../src/agent/run-agent.js";
import { createAnswerProcessor } from "../src/answer/answer-message.js";
import { conversationMemoryFor } from "../src/app/conversation-memory.js";
import { historyStoreFor } from "../src/app/history-for-config.js";
import { loadConfig } from "../src/config/load-config.js";
import type { InboundMessage } from "../src/contracts/inbound-message.js";
import { createMemoryReplyJournal } from "../src/contracts/reply-journal.js";
import { createLocalRateGate } from "../src/reply/rate-gate.js";
import { newsTool, readUrlTool, weatherTool, type Execution } from "../test/agent/test-tools.js";
import { qwen3Encoder } from "../test/fakes/llama-extras.js";
import {
  startFakeOpenAI,
  textAnswer,
  toolCallAnswer,
  type FakeHandler,
  type RecordedRequest,
} from "../test/fakes/openai-server.js";
import { createRecordingReplyPort } from "../test/reply/recording-reply-port.js";

/** One turn's figures. */
export interface PromptCacheTurn {
  turn: number;
  /** Chat requests of the turn (a tool round makes two) and summary requests after it. */
  requests: number;
  summaries: number;
  promptTokens: number;
  processedTokens: number;
  reusedTokens: number;
}

const TURNS = 12;
const FACTS = "alpha beta gamma delta epsilon zeta eta theta".split(" ");

/** Short answers, a weather tool round when asked, summaries that list the facts they were shown. */
const model: FakeHandler = (request) => {
  const messages = request.body.messages ?? [];
  if (request.body.stream !== true) {
    const sent = messages.map((m) => String(m.content ?? "")).join("\n");
    return textAnswer(`The user told these facts: ${[...new Set(sent.match(/fact \d+ is \w+/g) ?? [])].join("; ")}.`);
  }
  const last = messages.at(-1);
  if (last?.role === "tool") return textAnswer(`It is ${String(last.content).slice(0, 40)}.`);
  const text = String(last?.content ?? "");
  if (/weather/.test(text)) return toolCallAnswer([{ name: "get_weather", arguments: { city: "Beijing" } }]);
  return textAnswer(`Noted ${/fact (\d+)/.exec(text)?.[0] ?? "that"}.`);
};

/** Moves the process clock forward (Date only; timers keep real time). Returns the undo. */
function movableClock(): { advance(ms: number): void; restore(): void } {
  const RealDate = Date;
  let offset = 0;
  class MovedDate extends RealDate {
    constructor(...args: unknown[]) {
      if (args.length === 0) super(RealDate.now() + offset);
      else super(...(args as [number]));
    }
    static override now(): number {
      return RealDate.now() + offset;
    }
  }
  globalThis.Date = MovedDate as DateConstructor;
  return {
    advance: (ms) => {
      offset += ms;
    },
    restore: () => {
      globalThis.Date = RealDate;
    },
  };
}

/** Runs the conversation and returns its figures per turn. */
export async function measurePromptCache(redisUrl: string): Promise<PromptCacheTurn[]> {
  const fake = await startFakeOpenAI({
    llama: { contextTokens: 4096, enforceContext: true, promptCache: true },
    handler: model,
  });
  const prefix = `bench-cache-${Math.random().toString(16).slice(2, 10)}`;
  const config = loadConfig({
    REDIS_URL: redisUrl,
    KEY_PREFIX: prefix,
    OPENAI_BASE_URL: fake.url,
    ENABLE_THINKING: "false",
    MODEL_MAX_TOKENS: "512",
    HISTORY_MAX_MESSAGES: "16",
  });
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 3 });
  const logger = pino({ level: "silent" });
  const client = createModelClient({ baseURL: fake.url, apiKey: config.OPENAI_API_KEY, timeoutMs: 30_000 });
  const log: Execution[] = [];
  const tools = [weatherTool(log, { Beijing: 21 }, 1), newsTool(log, []), readUrlTool(log, {})];
  const history = historyStoreFor(config, redis);
  const memory = conversationMemoryFor(config, { redis, history, client, logger, tools: () => tools });
  let port = createRecordingReplyPort({ flavour: "discord", limits: { maxLength: 2000, minEditIntervalMs: 0 } });
  const { process: answer } = createAnswerProcessor({
    history,
    context: memory.context,
    compactor: memory.compactor,
    agent: (messages, signal, opts) =>
      runAgent(
        {
          client,
          model: config.MODEL,
          modelServer: config.MODEL_SERVER,
          enableThinking: false,
          maxToolRounds: config.MAX_TOOL_ROUNDS,
          maxTokens: config.MODEL_MAX_TOKENS,
          toolTimeoutMs: 1000,
          tools,
        },
        { messages, signal, ...(opts?.shrinkHistory ? { shrinkHistory: opts.shrinkHistory } : {}) },
      ),
    ports: { discord: () => port },
    gate: createLocalRateGate({ minIntervalMs: 0 }),
    showReasoning: "off",
    logger,
  });
  await qwen3Encoder();
  await memory.warm();
  const clock = movableClock();
  const turns: PromptCacheTurn[] = [];
  try {
    for (let turn = 1; turn <= TURNS; turn++) {
      if (turn > 1) clock.advance(60_000);
      const before = fake.requests.length;
      port = createRecordingReplyPort({ flavour: "discord", limits: { maxLength: 2000, minEditIntervalMs: 0 } });
      const text =
        turn % 4 === 0
          ? "What is the weather in Beijing now?"
          : `Please remember that fact ${turn} is ${FACTS[turn % FACTS.length]}, and that it matters for the trip we are planning next month with the whole family.`;
      const message: InboundMessage = {
        platform: "discord",
        conversationKey: "dc:bench",
        chatId: "bench",
        messageId: String(turn),
        chatType: "private",
        author: { id: "u1", displayName: "Ada" },
        text,
        receivedAt: Date.now(),
      };
      await answer(message, {
        jobId: `bench-${turn}`,
        attempt: 1,
        isFinalAttempt: true,
        signal: new AbortController().signal,
        journal: createMemoryReplyJournal(),
        markAnswered: async () => undefined,
      });
      const made = fake.requests.slice(before) as RecordedRequest[];
      turns.push({
        turn,
        requests: made.filter((r) => r.body.stream === true).length,
        summaries: made.filter((r) => r.body.stream !== true).length,
        promptTokens: sum(made, (r) => r.promptTokens),
        processedTokens: sum(made, (r) => r.processedTokens),
        reusedTokens: sum(made, (r) => r.cachedTokens),
      });
    }
  } finally {
    clock.restore();
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
    await fake.close();
  }
  return turns;
}

function sum(requests: RecordedRequest[], of: (r: RecordedRequest) => number | undefined): number {
  return requests.reduce((n, r) => n + (of(r) ?? 0), 0);
}

/** The figures as a table, with the totals and the share reused (of every prompt token, and from turn 2). */
export function formatPromptCache(turns: readonly PromptCacheTurn[]): string {
  const pct = (part: number, whole: number): string => (whole ? `${Math.round((100 * part) / whole)}%` : "–");
  const rows = turns.map(
    (t) =>
      `| ${t.turn} | ${t.requests}${t.summaries ? ` + ${t.summaries} summary` : ""} | ${t.promptTokens} | ${t.processedTokens} | ${t.reusedTokens} | ${pct(t.reusedTokens, t.promptTokens)} |`,
  );
  const total = (of: (t: PromptCacheTurn) => number, from = 1) =>
    turns.filter((t) => t.turn >= from).reduce((n, t) => n + of(t), 0);
  return [
    "Prompt cache: one private chat, 12 turns a minute apart (a tool round every 4th turn; summaries included)",
    "",
    "| turn | requests | prompt tokens | processed | reused | reused share |",
    "| ---- | -------- | ------------- | --------- | ------ | ------------ |",
    ...rows,
    `| all | | ${total((t) => t.promptTokens)} | ${total((t) => t.processedTokens)} | ${total((t) => t.reusedTokens)} | ${pct(
      total((t) => t.reusedTokens),
      total((t) => t.promptTokens),
    )} |`,
    `| 2–12 | | ${total((t) => t.promptTokens, 2)} | ${total((t) => t.processedTokens, 2)} | ${total((t) => t.reusedTokens, 2)} | ${pct(
      total((t) => t.reusedTokens, 2),
      total((t) => t.promptTokens, 2),
    )} |`,
  ].join("\n");
}

// `tsx bench/prompt-cache.ts` on its own (the load levels take minutes; this takes seconds).
if (import.meta.url === `file://${process.argv[1]}`) {
  measurePromptCache(process.env.REDIS_URL ?? "redis://127.0.0.1:6379")
    .then((turns) => {
      process.stdout.write(`${formatPromptCache(turns)}\n`);
      process.exit(0);
    })
    .catch((error: unknown) => {
      process.stderr.write(`prompt-cache bench failed: ${String(error)}\n`);
      process.exit(1);
    });
}
