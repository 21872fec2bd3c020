import { pino } from "pino";
import { describe, expect, it, vi } from "vitest";
import type { AgentEvent } from "../../src/contracts/agent-events.js";
import type { ChatMessage } from "../../src/contracts/chat-message.js";
import { createLocalRateGate } from "../../src/reply/rate-gate.js";
import { createMemoryReplyJournal } from "../../src/contracts/reply-journal.js";
import type { HistoryStore } from "../../src/history/history-store.js";
import type { InboundMessage } from "../../src/contracts/inbound-message.js";
import type { JobContext } from "../../src/queue/message-worker.js";
import { createAnswerProcessor, TYPING_FADES_MS, type AgentRunner } from "../../src/answer/answer-message.js";
import { createRecordingReplyPort, type RecordingReplyPort } from "../reply/recording-reply-port.js";
import { inboundMessage } from "../support/inbound-message.js";

const message: InboundMessage = inboundMessage({
  platform: "discord",
  chatId: "42",
  messageId: "7",
  chatType: "group",
  author: { id: "u1", displayName: "Ada" },
  text: "what is the weather?",
});

function deferred<T>() {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

const earlier: ChatMessage[] = [
  { role: "user", content: "hello" },
  { role: "assistant", content: "hi Ada" },
];

/** A processor over a recording port, a history whose load is held until the test lets it go, and a one-line model. */
function setup() {
  const port: RecordingReplyPort = createRecordingReplyPort({ flavour: "discord", limits: { minEditIntervalMs: 50 } });
  const load = deferred<ChatMessage[]>();
  const appended: ChatMessage[][] = [];
  let loads = 0;
  const history: HistoryStore = {
    load: async () => {
      loads++;
      return load.promise;
    },
    loadWith: async () => {
      throw new Error("not used without settings");
    },
    append: async (_key, messages) => {
      appended.push([...messages]);
      return true;
    },
    reset: async () => undefined,
  };
  const modelSaw: ChatMessage[][] = [];
  const agent: AgentRunner = (messages) => {
    modelSaw.push(messages);
    return (async function* (): AsyncGenerator<AgentEvent> {
      yield { type: "text-delta", round: 1, text: "Sunny, 21 °C." };
      yield {
        type: "finish",
        reason: "stop",
        text: "Sunny, 21 °C.",
        messages: [{ role: "assistant", content: "Sunny, 21 °C." }],
        rounds: 1,
      };
    })();
  };
  const { process } = createAnswerProcessor({
    history,
    agent,
    ports: { discord: () => port },
    gate: createLocalRateGate({ minIntervalMs: 0 }),
    showReasoning: "collapsed",
    logger: pino({ level: "silent" }),
  });
  const ctx = (isFinalAttempt: boolean): JobContext => ({
    jobId: "discord-42-7",
    attempt: isFinalAttempt ? 4 : 1,
    isFinalAttempt,
    signal: new AbortController().signal,
    journal: createMemoryReplyJournal(),
    markAnswered: async () => undefined,
  });
  return { port, load, appended, modelSaw, process, ctx, loads: () => loads };
}

describe("answering a message", () => {
  it("shows typing and the placeholder before the history has loaded, then answers with the history", async () => {
    const s = setup();
    const done = s.process(message, s.ctx(false));
    // The history read is still pending: the chat already shows that the bot is working.
    await vi.waitFor(() => {
      expect(s.port.typingCalls).toBe(1);
      expect(s.port.requests.filter((r) => r.kind === "send")).toHaveLength(1);
    });
    expect(s.loads()).toBe(1);
    expect(s.modelSaw).toHaveLength(0);

    s.load.resolve(earlier);
    await done;
    expect(s.modelSaw).toEqual([
      [...earlier, { role: "user", content: expect.stringContaining("what is the weather?") }],
    ]);
    expect(s.port.visibleTexts()).toEqual(["Sunny, 21 °C."]);
    expect(s.appended).toHaveLength(1);
  });

  it("leaves typing to the adapter that showed it moments ago, and shows it again once it has faded or on a retry", async () => {
    const typingFor = async (receivedAgoMs: number, finalAttempt: boolean) => {
      const s = setup();
      const done = s.process(
        { ...message, typingOnReceipt: true, receivedAt: Date.now() - receivedAgoMs },
        s.ctx(finalAttempt),
      );
      // The placeholder is the sign that the worker has it; typing is only counted once that is out.
      await vi.waitFor(() => expect(s.port.requests.filter((r) => r.kind === "send")).toHaveLength(1));
      s.load.resolve(earlier);
      await done;
      expect(s.port.visibleTexts()).toEqual(["Sunny, 21 °C."]);
      return s.port.typingCalls;
    };
    expect(await typingFor(200, false)).toBe(0);
    expect(await typingFor(TYPING_FADES_MS + 500, false)).toBe(1);
    expect(await typingFor(200, true)).toBe(1);
  });

  it("a history that cannot be read fails the attempt (to be retried) without asking the model", async () => {
    const s = setup();
    const done = s.process(message, s.ctx(false));
    await vi.waitFor(() => expect(s.port.typingCalls).toBe(1));
    s.load.reject(new Error("redis is away"));
    await expect(done).rejects.toThrow("redis is away");
    expect(s.modelSaw).toHaveLength(0);
    expect(s.appended).toHaveLength(0);
    // Not the last attempt: the placeholder stays as it is for the retry to continue.
    expect(s.port.visibleTexts().join("")).not.toMatch(/unavailable|wrong/i);
  });
});
