import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { AgentEvent } from "../../src/contracts/agent-events.js";
import { fenceAfter } from "../../src/shared/code-fence.js";
import { createLocalRateGate, type RateGate } from "../../src/reply/rate-gate.js";
import { visibleText } from "../../src/reply/rendered-length.js";
import { createMemoryReplyJournal, type ReplyJournal } from "../../src/contracts/reply-journal.js";
import { showFailure, streamReply, SUPERSEDED_TEXT, type StreamReplyOptions } from "../../src/reply/reply-stream.js";
import { modelUnavailableLine } from "../../src/reply/reply-view.js";
import { RateLimitedError } from "../../src/contracts/reply-port.js";
import {
  createRecordingReplyPort,
  type RecordingPortOptions,
  type RecordingReplyPort,
} from "./recording-reply-port.js";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

const finish = (text: string, reason: "stop" | "length" | "aborted" = "stop"): AgentEvent => ({
  type: "finish",
  reason,
  text,
  messages: [{ role: "assistant", content: text }],
  rounds: 1,
});

/** The answer as text deltas of `chunk` characters (a token stream), then `finish`. */
function answer(text: string, chunk = 24, round = 1): AgentEvent[] {
  const events: AgentEvent[] = [];
  for (let i = 0; i < text.length; i += chunk)
    events.push({ type: "text-delta", round, text: text.slice(i, i + chunk) });
  events.push(finish(text));
  return events;
}

/** Yields the events `gapMs` apart (fake time), optionally pausing before an index or throwing there. */
async function* timed(
  events: AgentEvent[],
  opts: { gapMs?: number; pauseAt?: number; pauseMs?: number; throwAt?: number; error?: Error } = {},
): AsyncGenerator<AgentEvent> {
  for (const [i, event] of events.entries()) {
    if (i === opts.throwAt) throw opts.error ?? new Error("model stream dropped");
    await sleep(i === opts.pauseAt ? (opts.pauseMs ?? 0) : (opts.gapMs ?? 30));
    yield event;
  }
}

/** A long answer in paragraphs, with a code block in the middle (so a cut may fall inside it). */
function longAnswer(chars: number): string {
  const paragraphs: string[] = [];
  let n = 0;
  while (paragraphs.join("\n\n").length < chars) {
    n++;
    if (n % 7 === 0) {
      paragraphs.push(
        `\`\`\`python\n${Array.from({ length: 18 }, (_, i) => `print("line ${n}.${i}")  # comment`).join("\n")}\n\`\`\``,
      );
    } else {
      paragraphs.push(
        `Paragraph ${n}: ${"The weather in 北京 is **sunny** and mild today, with a light breeze. ".repeat(3).trim()}`,
      );
    }
  }
  return paragraphs.join("\n\n");
}

function run(port: RecordingReplyPort, events: AsyncIterable<AgentEvent>, extra: Partial<StreamReplyOptions> = {}) {
  const journal = extra.journal ?? createMemoryReplyJournal();
  const gate = createLocalRateGate({ minIntervalMs: port.limits.minEditIntervalMs });
  const promise = streamReply({ port, chatKey: "chat", events, journal, showReasoning: "collapsed", gate, ...extra });
  return { journal, promise };
}

async function settle<T>(promise: Promise<T>): Promise<T> {
  const outcome = promise.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  await vi.runAllTimersAsync();
  const result = await outcome;
  if (!result.ok) throw result.error;
  return result.value;
}

/** Once a message got its final text, it is never touched again. */
function expectNoEditAfterFinal(port: RecordingReplyPort) {
  const finalAt = new Map<string, number>();
  port.requests.forEach((r, i) => {
    if (r.outcome !== "ok" || !r.messageId) return;
    expect(finalAt.has(r.messageId), `request ${i} edits ${r.messageId} after its final text`).toBe(false);
    if (r.final) finalAt.set(r.messageId, i);
  });
}

const squash = (s: string) => s.replace(/\s+/g, "");

describe("streamReply", () => {
  it("shows a placeholder at once, records it before anything else, then streams coalesced edits", async () => {
    const port = createRecordingReplyPort({ flavour: "telegram", latencyMs: 50 });
    const recordedWhen: number[] = [];
    const inner = createMemoryReplyJournal();
    const journal: ReplyJournal = {
      get messageIds() {
        return inner.messageIds;
      },
      async record(ids) {
        recordedWhen.push(port.requests.length);
        await inner.record(ids);
      },
    };
    let visibleAt: number | undefined;
    const start = Date.now();
    const text = "北京今天**晴**，气温 25°C。\n\n明天有小雨，记得带伞。";
    const { promise } = run(port, timed(answer(text, 2), { gapMs: 40 }), {
      journal,
      onFirstVisible: () => (visibleAt ??= Date.now()),
    });
    const result = await settle(promise);

    expect(port.typingCalls).toBe(1);
    expect(port.requests[0]).toMatchObject({ kind: "send", start, final: false, continuation: false });
    expect(port.requests[0]!.content.text).toBe("…");
    expect(visibleAt).toBe(start + 50); // as soon as the placeholder was posted
    expect(recordedWhen).toEqual([1]); // recorded right after the placeholder, before any edit
    expect(journal.messageIds).toEqual(["m1"]);
    expect(result.messageIds).toEqual(["m1"]);
    expect(port.visibleTexts()).toEqual(["北京今天晴，气温 25°C。\n\n明天有小雨，记得带伞。"]);
    expect(port.messages()[0]!.text).toContain("<b>晴</b>");
    expect(port.messages()[0]!.final).toBe(true);
    // ~30 deltas over ~1.2 s at one edit per second: a handful of requests, not one per token.
    expect(port.requests.length).toBeLessThanOrEqual(4);
    expect(port.violations).toEqual([]);
    expect(port.noOpEdits).toBe(0);
    expect(result.finish?.reason).toBe("stop");
  });

  it("splits a 6000-character answer into ≥3 messages, each within 2000, fences balanced, nothing lost", async () => {
    const port = createRecordingReplyPort({
      flavour: "discord",
      limits: { maxLength: 2000, minEditIntervalMs: 1000 },
      latencyMs: 80,
    });
    const text = longAnswer(6000);
    const { promise, journal } = run(port, timed(answer(text, 30), { gapMs: 20 }));
    const result = await settle(promise);

    const messages = port.messages();
    expect(messages.length).toBeGreaterThanOrEqual(3);
    for (const m of messages) {
      expect(m.text.length).toBeLessThanOrEqual(2000);
      expect(fenceAfter(m.text)).toBeUndefined();
      expect(m.final).toBe(true);
    }
    expect(messages.map((m) => m.continuation)).toEqual(messages.map((_, i) => i > 0));
    // Nothing lost: the messages read as the answer (cuts only add fence lines and drop whitespace).
    const joined = messages.map((m) => m.text).join("\n");
    expect(squash(joined.replace(/```(python)?/g, ""))).toBe(squash(text.replace(/```(python)?/g, "")));
    expect(journal.messageIds).toEqual(messages.map((m) => m.id));
    expect(result.messageIds).toEqual(journal.messageIds);
    expectNoEditAfterFinal(port);
    expect(port.violations).toEqual([]);
    expect(port.maxInFlight).toBeLessThanOrEqual(2); // a finished message's last edit may overlap the next send
  });

  it("fills a long reply from the top: no continuation shows text before the message above it has its final text", async () => {
    // A slow platform: the placeholder is still on its way when the whole answer is ready.
    const port = createRecordingReplyPort({
      flavour: "discord",
      limits: { maxLength: 2000, minEditIntervalMs: 1000 },
      latencyMs: 1500,
    });
    // The model writes far faster than the chat's pace, so several messages' worth is ready at once.
    const { promise } = run(port, timed(answer(longAnswer(8000), 200), { gapMs: 5 }));
    await settle(promise);
    const ids = port.messages().map((m) => m.id);
    expect(ids.length).toBeGreaterThanOrEqual(4);
    const ok = port.requests.filter((r) => r.outcome === "ok");
    for (let i = 1; i < ids.length; i++) {
      const aboveFinal = ok.find((r) => r.messageId === ids[i - 1] && r.final);
      const firstHere = ok.find((r) => r.messageId === ids[i]);
      expect(aboveFinal, `final text of message ${i - 1}`).toBeDefined();
      expect(firstHere!.start, `message ${i} appears only after message ${i - 1} is complete`).toBeGreaterThanOrEqual(
        aboveFinal!.end!,
      );
    }
    expect(port.violations).toEqual([]);
  });

  it("splits by Telegram's visible length, never producing HTML Telegram rejects", async () => {
    const port = createRecordingReplyPort({
      flavour: "telegram",
      limits: { maxLength: 4096, minEditIntervalMs: 1000 },
    });
    const text = longAnswer(10_000);
    const { promise } = run(port, timed(answer(text, 40), { gapMs: 15 }));
    await settle(promise);
    const visible = port.visibleTexts();
    expect(visible.length).toBeGreaterThanOrEqual(3);
    for (const t of visible) expect(t.length).toBeLessThanOrEqual(4096);
    expect(port.violations).toEqual([]); // includes HTML validation of every request
    expectNoEditAfterFinal(port);
  });

  it("resumes a retried job by editing its recorded messages instead of answering twice", async () => {
    const port = createRecordingReplyPort({
      flavour: "plain",
      limits: { maxLength: 2000, minEditIntervalMs: 500 },
      existing: ["old part 1", "old part 2"],
    });
    const journal = createMemoryReplyJournal(["m1", "m2"]);
    let visible = 0;
    const { promise } = run(port, timed(answer("A short answer this time.")), {
      journal,
      onFirstVisible: () => visible++,
    });
    const result = await settle(promise);
    expect(visible).toBe(1);
    expect(port.requests.filter((r) => r.kind === "send")).toEqual([]);
    expect(port.messages().map((m) => [m.text, m.final])).toEqual([
      ["A short answer this time.", true],
      [SUPERSEDED_TEXT, true],
    ]);
    expect(result.messageIds).toEqual(["m1", "m2"]);

    // A longer answer on retry: the recorded messages are reused in order, a third one is sent beyond them.
    const port2 = createRecordingReplyPort({
      flavour: "plain",
      limits: { maxLength: 2000, minEditIntervalMs: 500 },
      existing: ["old 1", "old 2"],
    });
    const journal2 = createMemoryReplyJournal(["m1", "m2"]);
    const text = longAnswer(5000);
    const second = run(port2, timed(answer(text, 50), { gapMs: 10 }), { journal: journal2 });
    await settle(second.promise);
    const sends = port2.requests.filter((r) => r.kind === "send");
    expect(sends.every((r) => r.continuation)).toBe(true);
    expect(journal2.messageIds.slice(0, 2)).toEqual(["m1", "m2"]);
    expect(journal2.messageIds.length).toBe(port2.messages().length);
    expect(
      squash(
        port2
          .messages()
          .map((m) => m.text)
          .join("")
          .replace(/```(python)?/g, ""),
      ),
    ).toBe(squash(text.replace(/```(python)?/g, "")));
    expectNoEditAfterFinal(port2);
  });

  it("a retried job takes no slot before it has something to show (its message is already there)", async () => {
    const port = createRecordingReplyPort({ flavour: "plain", limits: { minEditIntervalMs: 1000 }, existing: ["old"] });
    const local = createLocalRateGate({ minIntervalMs: 1000 });
    const acquiredAt: number[] = [];
    const gate: RateGate = {
      acquire: (key, kind, signal) => {
        acquiredAt.push(Date.now());
        return local.acquire(key, kind, signal);
      },
      settled: (key) => local.settled(key),
      backoff: (key, ms) => local.backoff(key, ms),
    };
    const start = Date.now();
    const events = timed(answer("A fresh answer."), { pauseAt: 0, pauseMs: 5_000 });
    const { promise } = run(port, events, { journal: createMemoryReplyJournal(["m1"]), gate });
    await settle(promise);
    expect(acquiredAt.length).toBeGreaterThan(0);
    expect(acquiredAt.every((at) => at >= start + 5_000)).toBe(true);
    expect(port.messages().map((m) => [m.text, m.final])).toEqual([["A fresh answer.", true]]);
  });

  it("streams drafts in private chats, keeps them alive while tools run, then sends the answer", async () => {
    const port = createRecordingReplyPort({
      flavour: "telegram",
      drafts: true,
      limits: { minEditIntervalMs: 1000 },
      latencyMs: 900,
    });
    const events: AgentEvent[] = [
      { type: "tool-call", round: 1, id: "c1", name: "get_weather", arguments: '{"city":"北京"}' },
      { type: "tool-result", round: 1, id: "c1", name: "get_weather", ok: true, output: "{}", durationMs: 65_000 },
      ...answer("It is sunny in Beijing. ".repeat(4).trim(), 1, 2),
    ];
    const start = Date.now();
    const { promise, journal } = run(port, timed(events, { pauseAt: 1, pauseMs: 65_000 }), { draftId: 7 });
    const result = await settle(promise);

    const drafts = port.requests.filter((r) => r.kind === "draft");
    expect(drafts[0]).toMatchObject({ start, draftId: 7 });
    expect(drafts.every((d) => d.draftId === 7)).toBe(true);
    expect(drafts.some((d) => d.content.text.includes("🔧 get_weather(北京)…"))).toBe(true);
    // While the tool ran for 65 s, the draft was re-sent at least every ~20 s (drafts vanish after 30 s).
    const toolDrafts = drafts.filter((d) => d.start - start < 65_000).map((d) => d.start);
    for (let i = 1; i < toolDrafts.length; i++) expect(toolDrafts[i]! - toolDrafts[i - 1]!).toBeLessThanOrEqual(21_000);
    expect(toolDrafts.at(-1)! - start).toBeGreaterThanOrEqual(60_000);

    expect(port.requests.filter((r) => r.kind === "edit")).toEqual([]);
    const sends = port.requests.filter((r) => r.kind === "send");
    expect(sends).toHaveLength(1);
    expect(sends[0]).toMatchObject({ final: true, continuation: false });
    expect(sends[0]!.start).toBeGreaterThan(drafts.at(-1)!.end!); // no draft lands after the message
    expect(port.visibleTexts()).toEqual([`✅ get_weather(北京)\n\n${"It is sunny in Beijing. ".repeat(4).trim()}`]);
    expect(journal.messageIds).toEqual(result.messageIds);
    expect(port.violations).toEqual([]);
    // Nothing follows the message: no late draft, no keep-alive.
    const count = port.requests.length;
    await vi.advanceTimersByTimeAsync(60_000);
    expect(port.requests.length).toBe(count);
  });

  it("shows tool activity while tools run, then marks them done", async () => {
    const port = createRecordingReplyPort({ flavour: "plain", limits: { minEditIntervalMs: 1000 } });
    const events: AgentEvent[] = [
      { type: "tool-call", round: 1, id: "c1", name: "get_weather", arguments: '{"city":"北京"}' },
      {
        type: "tool-result",
        round: 1,
        id: "c1",
        name: "get_weather",
        ok: false,
        output: "timeout after 15000 ms",
        durationMs: 15_000,
      },
      ...answer("Sorry, the weather service timed out.", 8, 2),
    ];
    const { promise } = run(port, timed(events, { pauseAt: 1, pauseMs: 15_000 }));
    await vi.advanceTimersByTimeAsync(5_000);
    expect(port.messages()[0]!.text).toBe("🔧 get\\_weather(北京)…");
    await settle(promise);
    expect(port.messages()[0]!.text).toBe(
      "⚠️ get\\_weather(北京): timeout after 15000 ms\n\nSorry, the weather service timed out.",
    );
  });

  it("stops on abort: flushes what is there with a stopped note, as the final text", async () => {
    const port = createRecordingReplyPort({ flavour: "plain", limits: { minEditIntervalMs: 1000 } });
    const controller = new AbortController();
    async function* endless(): AsyncGenerator<AgentEvent> {
      for (let i = 0; i < 1000; i++) {
        await sleep(100);
        yield { type: "text-delta", round: 1, text: `word${i} ` };
      }
    }
    const { promise } = run(port, endless(), { signal: controller.signal });
    setTimeout(() => controller.abort(new Error("/stop")), 2_500);
    const result = await settle(promise);
    expect(result.stopped).toBe(true);
    const message = port.messages()[0]!;
    expect(message.final).toBe(true);
    expect(message.text).toMatch(/^word0 word1 .*word2\d\n\n⏹ _stopped_$/);
    expect(port.requests.at(-1)!.start).toBeGreaterThanOrEqual(2_500);
    expect(port.violations).toEqual([]);
  });

  it("flushes what it has and rethrows when the event stream fails, optionally with a failure line", async () => {
    const port = createRecordingReplyPort({ flavour: "plain", limits: { minEditIntervalMs: 1000 } });
    const events = answer("Half of the answer and then", 6);
    const { promise } = run(port, timed(events, { throwAt: 3, error: new Error("model stream dropped") }));
    await expect(settle(promise)).rejects.toThrow("model stream dropped");
    expect(port.messages()).toHaveLength(1);
    expect(port.messages()[0]).toMatchObject({ text: "Half of the answer", final: true });

    const port2 = createRecordingReplyPort({ flavour: "plain", limits: { minEditIntervalMs: 1000 } });
    const second = run(port2, timed(events, { throwAt: 3 }), { failureLine: () => modelUnavailableLine() });
    await expect(settle(second.promise)).rejects.toThrow("model stream dropped");
    expect(port2.messages()[0]!.text).toBe(`Half of the answer\n\n${modelUnavailableLine()}`);
  });

  it("waits out a 429 storm and still lands the final text", async () => {
    const port = createRecordingReplyPort({ flavour: "telegram", limits: { minEditIntervalMs: 1000 }, latencyMs: 30 });
    const text = "A steady answer that keeps coming. ".repeat(20).trim();
    const { promise } = run(port, timed(answer(text, 10), { gapMs: 50 }));
    await vi.advanceTimersByTimeAsync(1_500);
    port.failNext(6, () => new RateLimitedError(4_000));
    await settle(promise);
    expect(port.visibleTexts()).toEqual([text]);
    expect(port.messages()[0]!.final).toBe(true);
    const limited = port.requests.filter((r) => r.outcome === "rate-limited");
    expect(limited).toHaveLength(6);
    port.requests.forEach((r, i) => {
      const next = port.requests[i + 1];
      if (r.outcome === "rate-limited" && next) expect(next.start).toBeGreaterThanOrEqual(r.end! + 4_000);
    });
    expect(port.violations).toEqual([]);
  });

  it("showFailure appends the line to the reply's last message, or posts it when there is none", async () => {
    const port = createRecordingReplyPort({ flavour: "telegram", existing: ["part one", "part two"] });
    const journal = createMemoryReplyJournal(["m1", "m2"]);
    await settle(showFailure(port, journal, modelUnavailableLine(), { previousMarkdown: "part **two**" }));
    expect(port.visibleTexts()).toEqual(["part one", `part two\n\n${modelUnavailableLine()}`]);
    expect(port.messages()[1]!.final).toBe(true);

    const empty = createRecordingReplyPort({ flavour: "telegram" });
    const fresh = createMemoryReplyJournal();
    await settle(showFailure(empty, fresh, modelUnavailableLine()));
    expect(empty.visibleTexts()).toEqual([modelUnavailableLine()]);
    expect(fresh.messageIds).toEqual(["m1"]);
  });
});

describe("streamReply freshness and render cost", () => {
  /** Text deltas `gapMs` apart, noting the answer as it stood after each one (the model's side of freshness). */
  function writing(words: number, gapMs: number) {
    const written: { at: number; text: string }[] = [];
    async function* events(): AsyncGenerator<AgentEvent> {
      let text = "";
      for (let i = 1; i <= words; i++) {
        await sleep(gapMs);
        const delta = `w${i} `;
        text += delta;
        written.push({ at: Date.now(), text: text.trimEnd() });
        yield { type: "text-delta", round: 1, text: delta };
      }
      yield finish(text);
    }
    /** What the model had written when a request started. */
    const at = (time: number) => written.filter((w) => w.at <= time).at(-1)?.text;
    return { events: events(), at };
  }

  /** Counts how often the port is asked to render (format) Markdown. */
  function countingFormat(port: RecordingReplyPort) {
    const format = port.format.bind(port);
    let calls = 0;
    port.format = (markdown) => {
      calls++;
      return format(markdown);
    };
    return () => calls;
  }

  it("renders when an edit has its slot, once per request, so every edit shows all the words written before it", async () => {
    const port = createRecordingReplyPort({ flavour: "plain", limits: { minEditIntervalMs: 1000 }, latencyMs: 7 });
    const formats = countingFormat(port);
    const model = writing(150, 30); // 4.5 s of writing at ~33 tokens/s
    const { promise } = run(port, model.events);
    await settle(promise);

    const edits = port.requests.filter((r) => r.kind === "edit" && !r.final);
    expect(edits.length).toBeGreaterThanOrEqual(3);
    for (const edit of edits) expect(edit.content.text).toBe(model.at(edit.start));
    // Placeholder, one render per edit, the final: not one per token, not one per timer tick.
    expect(formats()).toBeLessThanOrEqual(edits.length + 3);
    expect(port.messages()[0]).toMatchObject({ final: true, text: model.at(Number.POSITIVE_INFINITY) });
    expect(port.violations).toEqual([]);
  });

  it("paces drafts on the chat's own draft key at the port's draft interval, apart from the messages", async () => {
    const port = createRecordingReplyPort({
      flavour: "telegram",
      drafts: true,
      limits: { minEditIntervalMs: 1100, draftIntervalMs: 250 },
      latencyMs: 10,
    });
    const acquired: string[] = [];
    const local = createLocalRateGate({ minIntervalMs: (key) => (key.endsWith(":draft") ? 250 : 1100) });
    const gate: RateGate = {
      acquire: (key, kind, signal) => {
        acquired.push(`${key} ${kind}`);
        return local.acquire(key, kind, signal);
      },
      settled: (key) => local.settled(key),
      backoff: (key, ms) => local.backoff(key, ms),
    };
    const model = writing(100, 30); // 3 s of writing
    const { promise } = run(port, model.events, { gate });
    await settle(promise);

    const drafts = port.requests.filter((r) => r.kind === "draft");
    const visible = (r: (typeof drafts)[number]) => visibleText(port, r.content);
    // A word is on screen within about a draft interval: drafts ~260 ms apart while the model writes.
    const gaps = drafts.slice(1).map((d, i) => d.start - drafts[i]!.start);
    expect(Math.min(...gaps)).toBeGreaterThanOrEqual(250);
    expect(Math.max(...gaps)).toBeLessThanOrEqual(300);
    for (const draft of drafts.slice(1)) expect(visible(draft)).toBe(model.at(draft.start));
    expect(new Set(acquired.filter((a) => a.includes("intermediate")))).toEqual(new Set(["chat:draft intermediate"]));
    expect(acquired.filter((a) => a.includes("final"))).toEqual(["chat final"]);
    expect(port.requests.filter((r) => r.kind !== "draft").map((r) => [r.kind, r.final])).toEqual([["send", true]]);
    expect(port.violations).toEqual([]);
  });
});

describe("streamReply properties", () => {
  const tokens = [
    "word ",
    "北京 ",
    "😀",
    ". ",
    "\n",
    "\n\n",
    "```js\n",
    "\n```\n",
    "**",
    "`",
    "<",
    "&",
    "@everyone ",
    "[a](https://x.org) ",
    "- item\n",
  ];
  const flavours: RecordingPortOptions["flavour"][] = ["telegram", "discord", "plain"];

  it("whatever the answer, pace and 429s: messages fit, nothing is lost, nothing is edited after its final text", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          parts: fc.array(fc.constantFrom(...tokens), { maxLength: 400 }),
          chunk: fc.integer({ min: 1, max: 60 }),
          gapMs: fc.integer({ min: 0, max: 200 }),
          latencyMs: fc.integer({ min: 0, max: 800 }),
          limit: fc.integer({ min: 80, max: 600 }),
          interval: fc.integer({ min: 50, max: 1500 }),
          flavour: fc.constantFrom(...flavours),
          limited: fc.integer({ min: 0, max: 3 }),
        }),
        async (c) => {
          const port = createRecordingReplyPort({
            flavour: c.flavour,
            limits: { maxLength: c.limit, minEditIntervalMs: c.interval },
            latencyMs: c.latencyMs,
          });
          port.failNext(c.limited, () => new RateLimitedError(c.interval * 2));
          const text = c.parts.join("");
          const { promise, journal } = run(port, timed(answer(text, c.chunk), { gapMs: c.gapMs }));
          const result = await settle(promise);

          const messages = port.messages();
          expect(port.violations).toEqual([]); // interval, length and HTML rules all kept
          expect(messages.every((m) => m.final)).toBe(true);
          expect(journal.messageIds).toEqual(messages.map((m) => m.id));
          expect(result.messageIds).toEqual(journal.messageIds);
          expectNoEditAfterFinal(port);
          // Nothing lost (modulo whitespace at cuts, fence lines and the mention guard's invisible joiner).
          const strip = (s: string) => squash(s.replace(/`{3,}(js)?/g, "").replace(/\u200D/g, ""));
          const shown = c.flavour === "telegram" ? port.visibleTexts().join("") : messages.map((m) => m.text).join("");
          if (c.flavour !== "telegram") expect(strip(shown)).toBe(strip(text.trim() === "" ? "_(no answer)_" : text));
          else expect(shown.length).toBeGreaterThan(0);
        },
      ),
      { numRuns: 40 },
    );
  });
});

// The recording port is configurable; its options type is part of this suite's vocabulary.
export type { RecordingPortOptions };
