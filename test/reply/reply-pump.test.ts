import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createMemoryReplyJournal, type ReplyJournal } from "../../src/contracts/reply-journal.js";
import { RateLimitedError, RejectedContentError } from "../../src/contracts/reply-port.js";
import { createLocalRateGate } from "../../src/reply/rate-gate.js";
import { createReplyPump, type ReplyPumpOptions } from "../../src/reply/reply-pump.js";
import { createRecordingReplyPort, type RecordingReplyPort } from "./recording-reply-port.js";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * A pump over a recording port. The "model" is the list of message texts the reply wants: every message
 * but the last is sealed (final at once), the last is live until `finish`. `renders` counts how often
 * the pump asked for the view.
 */
function setup(
  opts: {
    interval: number;
    latency?: number;
    drafts?: boolean;
    existing?: string[];
    journal?: ReplyJournal;
  } & Partial<ReplyPumpOptions>,
) {
  const port = createRecordingReplyPort({
    flavour: "plain",
    limits: { minEditIntervalMs: opts.interval, draftIntervalMs: opts.interval },
    latencyMs: opts.latency ?? 0,
    drafts: opts.drafts ?? false,
    ...(opts.existing ? { existing: opts.existing } : {}),
  });
  const journal = opts.journal ?? createMemoryReplyJournal(opts.existing?.map((_, i) => `m${i + 1}`));
  const model = { texts: [] as string[] };
  let renders = 0;
  const pump = createReplyPump({
    port,
    journal,
    chatKey: "chat",
    gate: createLocalRateGate({ minIntervalMs: (key) => (key.endsWith(":draft") ? opts.interval : opts.interval) }),
    render(final) {
      renders++;
      const messages = model.texts.map((text, i) => ({
        content: { text },
        final: final || i < model.texts.length - 1,
      }));
      if (opts.drafts && !final) return { messages: messages.slice(0, -1), draft: { text: model.texts.at(-1)! } };
      return { messages };
    },
    leftover: { text: "⋯" },
    ...(opts.signal ? { signal: opts.signal } : {}),
    ...(opts.draftKeepAliveMs ? { draftKeepAliveMs: opts.draftKeepAliveMs } : {}),
  });
  /** The model writes: the live message's text becomes `text` (a new message when `next`). */
  const write = (text: string, next = false) => {
    if (next || model.texts.length === 0) model.texts.push(text);
    else model.texts[model.texts.length - 1] = text;
    pump.invalidate();
  };
  const finish = async () => {
    const done = pump.finish().then(
      () => "landed",
      (error: unknown) => error,
    );
    await vi.runAllTimersAsync();
    return done;
  };
  return { port, journal, pump, model, write, finish, renders: () => renders };
}

function retryAfterRespected(port: RecordingReplyPort, retryAfterMs: number) {
  port.requests.forEach((request, i) => {
    const next = port.requests[i + 1];
    if (request.outcome === "rate-limited" && next)
      expect(next.start).toBeGreaterThanOrEqual((request.end ?? request.start) + retryAfterMs);
  });
}

describe("reply pump properties", () => {
  it("paces, sends only the newest text, honours 429s and always lands the final text", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          interval: fc.integer({ min: 50, max: 3000 }),
          latency: fc.integer({ min: 0, max: 1500 }),
          updates: fc.array(
            fc.record({ delay: fc.integer({ min: 0, max: 1200 }), text: fc.constantFrom("a", "ab", "abc", "x") }),
            { maxLength: 25 },
          ),
          limited: fc.integer({ min: 0, max: 4 }),
          limitedAfter: fc.integer({ min: 0, max: 6 }),
          retryAfterMs: fc.integer({ min: 1, max: 4000 }),
          final: fc.constantFrom("final answer", "abc", "a"),
        }),
        async (c) => {
          const { port, model, write, finish } = setup({ interval: c.interval, latency: c.latency });
          // An intermediate request always carries the newest text (rendered with the slot in hand).
          const stale: string[] = [];
          const edit = port.edit.bind(port);
          const send = port.send.bind(port);
          const check = (text: string, final?: boolean) => {
            if (!final && text !== model.texts.at(-1)) stale.push(text);
          };
          port.edit = (id, content, o) => {
            check(content.text, o.final);
            return edit(id, content, o);
          };
          port.send = (content, o) => {
            check(content.text, o.final);
            return send(content, o);
          };
          const driver = (async () => {
            for (const [i, u] of c.updates.entries()) {
              if (i === c.limitedAfter) port.failNext(c.limited, () => new RateLimitedError(c.retryAfterMs));
              await sleep(u.delay);
              write(u.text);
            }
          })();
          await vi.runAllTimersAsync();
          await driver;
          model.texts = [c.final];
          expect(await finish()).toBe("landed");

          expect(port.messages()).toHaveLength(1);
          expect(port.messages()[0]).toMatchObject({ text: c.final, final: true }); // the final text always lands
          expect(port.violations).toEqual([]); // never two requests inside the interval
          expect(port.maxInFlight).toBeLessThanOrEqual(1);
          expect(port.noOpEdits).toBe(0); // never an edit that changes nothing
          expect(stale).toEqual([]);
          retryAfterRespected(port, c.retryAfterMs);
          const ok = port.requests.filter((r) => r.outcome === "ok").length;
          expect(ok).toBeLessThanOrEqual(c.updates.length + 1); // coalesced
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe("reply pump", () => {
  it("coalesces a burst into its newest text, rendered once, one interval after the previous request finished", async () => {
    const { port, write, finish, renders } = setup({ interval: 1000, latency: 100 });
    write("x");
    await vi.advanceTimersByTimeAsync(0);
    for (let i = 2; i <= 50; i++) write("x".repeat(i)); // 49 tokens while the first request is in flight
    await vi.advanceTimersByTimeAsync(0);
    expect(port.requests.map((r) => r.content.text)).toEqual(["x"]);
    await vi.runAllTimersAsync();
    expect(port.requests.map((r) => r.content.text)).toEqual(["x", "x".repeat(50)]);
    expect(port.requests[1]!.start - port.requests[0]!.end!).toBe(1000);
    expect(renders()).toBe(2); // once per request, not once per token
    expect(await finish()).toBe("landed");
    // The final flag still needs one request although the text is the same (the Stop button goes away).
    expect(port.requests.map((r) => [r.content.text, r.final])).toEqual([
      ["x", false],
      ["x".repeat(50), false],
      ["x".repeat(50), true],
    ]);
  });

  it("fills a split reply from the top: each id is recorded before anything else, the next message only after the final text above", async () => {
    const recordedAt: number[] = [];
    const inner = createMemoryReplyJournal();
    let requests = 0;
    const journal: ReplyJournal = {
      get messageIds() {
        return inner.messageIds;
      },
      async record(ids) {
        recordedAt.push(requests);
        await inner.record(ids);
      },
    };
    const { port, write, finish } = setup({ interval: 500, latency: 300, journal });
    const counted = port.send.bind(port);
    port.send = (content, o) => {
      requests++;
      return counted(content, o);
    };
    write("part one, growing");
    await vi.advanceTimersByTimeAsync(100);
    write("part one, complete");
    write("part two", true);
    write("part two and more");
    write("part three", true);
    expect(await finish()).toBe("landed");

    expect(port.messages().map((m) => [m.text, m.final, m.continuation])).toEqual([
      ["part one, complete", true, false],
      ["part two and more", true, true],
      ["part three", true, true],
    ]);
    expect(inner.messageIds).toEqual(["m1", "m2", "m3"]);
    expect(recordedAt).toEqual([1, 2, 3]); // right after each send, before the next request
    const ok = port.requests.filter((r) => r.outcome === "ok");
    for (const id of ["m2", "m3"]) {
      const above = `m${Number(id.slice(1)) - 1}`;
      const aboveFinal = ok.find((r) => r.messageId === above && r.final)!;
      expect(ok.find((r) => r.messageId === id)!.start).toBeGreaterThanOrEqual(aboveFinal.end!);
    }
    expect(port.violations).toEqual([]);
  });

  it("a 429 holds the chat until retry_after, then the newest text goes, not the refused one", async () => {
    const { port, write, finish } = setup({ interval: 100 });
    port.failNext(1, () => new RateLimitedError(5000));
    write("old");
    await vi.advanceTimersByTimeAsync(1000);
    write("new");
    await vi.advanceTimersByTimeAsync(3000);
    expect(port.requests).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1000);
    expect(port.requests.map((r) => [r.content.text, r.outcome])).toEqual([
      ["old", "rate-limited"],
      ["new", "ok"],
    ]);
    expect(port.requests[1]!.start - port.requests[0]!.end!).toBe(5000);
    expect(await finish()).toBe("landed");
  });

  it("lands the final text through a 429 storm and transient failures; rejected content of a final fails finish", async () => {
    const { port, write, finish } = setup({ interval: 10 });
    write("answer");
    port.failNext(3, () => new RateLimitedError(2000));
    port.failNext(2, () => new Error("socket hang up"));
    expect(await finish()).toBe("landed");
    expect(port.messages()[0]).toMatchObject({ text: "answer", final: true });
    retryAfterRespected(port, 2000);

    const second = setup({ interval: 10 });
    second.write("bad");
    second.port.failNext(1, () => new RejectedContentError("can't parse entities"));
    expect(await second.finish()).toBeInstanceOf(RejectedContentError);
    expect(second.port.requests).toHaveLength(1);
  });

  it("skips an intermediate text the platform refused, and sends the next one", async () => {
    const { port, write, finish } = setup({ interval: 10 });
    port.failNext(1, () => new RejectedContentError("can't parse entities"));
    write("bad");
    await vi.runAllTimersAsync();
    write("bad");
    await vi.runAllTimersAsync();
    expect(port.requests).toHaveLength(1);
    write("good");
    await vi.runAllTimersAsync();
    expect(port.messages()[0]).toMatchObject({ text: "good", final: false });
    expect(await finish()).toBe("landed");
  });

  it("on /stop drops the intermediate waiting for its slot; the final text still lands", async () => {
    const controller = new AbortController();
    const { port, write, finish } = setup({ interval: 1000, signal: controller.signal });
    write("one");
    await vi.advanceTimersByTimeAsync(0);
    write("one two"); // waits for the slot due at 1000 ms
    await vi.advanceTimersByTimeAsync(300);
    controller.abort(new Error("/stop"));
    await vi.advanceTimersByTimeAsync(2000);
    expect(port.requests.map((r) => r.content.text)).toEqual(["one"]);
    write("one two ⏹ stopped");
    expect(await finish()).toBe("landed");
    expect(port.requests.map((r) => [r.content.text, r.final])).toEqual([
      ["one", false],
      ["one two ⏹ stopped", true],
    ]);
  });

  it("edits a retried job's messages in order and gives the ones the answer no longer needs a final text", async () => {
    const { port, write, finish } = setup({ interval: 10, existing: ["old one", "old two", "old three"] });
    write("new one");
    expect(await finish()).toBe("landed");
    expect(port.requests.filter((r) => r.kind === "send")).toEqual([]);
    expect(port.messages().map((m) => [m.text, m.final])).toEqual([
      ["new one", true],
      ["⋯", true],
      ["⋯", true],
    ]);
  });

  it("streams the live tail as drafts on the chat's draft key, keeps an idle draft alive, and sends no draft after the message", async () => {
    const { port, write, finish } = setup({ interval: 250, drafts: true, latency: 10, draftKeepAliveMs: 20_000 });
    write("a");
    await vi.advanceTimersByTimeAsync(100);
    write("a b");
    await vi.advanceTimersByTimeAsync(65_000); // a tool runs for a minute
    const drafts = port.requests.filter((r) => r.kind === "draft");
    expect(drafts.map((d) => d.content.text)).toEqual(["a", "a b", "a b", "a b", "a b"]);
    expect(drafts.slice(2).map((d, i) => d.start - drafts[i + 1]!.end!)).toEqual([20_000, 20_000, 20_000]);
    write("a b c");
    expect(await finish()).toBe("landed");
    const message = port.requests.filter((r) => r.kind !== "draft");
    expect(message.map((r) => [r.kind, r.content.text, r.final])).toEqual([["send", "a b c", true]]);
    const count = port.requests.length;
    await vi.advanceTimersByTimeAsync(60_000);
    expect(port.requests.length).toBe(count); // no keep-alive after the message
    expect(port.violations).toEqual([]);
  });
});
