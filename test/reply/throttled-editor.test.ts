import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createLocalRateGate } from "../../src/reply/rate-gate.js";
import { createThrottledEditor } from "../../src/reply/throttled-editor.js";
import { RateLimitedError, RejectedContentError } from "../../src/contracts/reply-port.js";
import { createRecordingReplyPort, type RecordingReplyPort } from "./recording-reply-port.js";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** An editor of message m1 of a recording port, paced by a local gate with the port's interval. */
function setup(opts: { interval: number; latency: number; maxTransientRetries?: number; pull?: boolean }) {
  const port = createRecordingReplyPort({
    flavour: "plain",
    limits: { minEditIntervalMs: opts.interval },
    latencyMs: opts.latency,
    existing: ["initial"],
  });
  const gate = createLocalRateGate({ minIntervalMs: opts.interval });
  let latest: string | undefined;
  const staleSends: string[] = [];
  const editor = createThrottledEditor<string>({
    chatKey: "chat",
    gate,
    ...(opts.maxTransientRetries !== undefined ? { maxTransientRetries: opts.maxTransientRetries } : {}),
    apply: (text, { final, signal }) => {
      // "Newest wins": an intermediate request always carries the newest text.
      if (!final && text !== latest) staleSends.push(text);
      return port.edit("m1", { text }, { final, ...(signal ? { signal } : {}) });
    },
    // Pull mode: the owner only invalidates and hands over its newest text when the editor has a slot.
    ...(opts.pull ? { produce: () => latest !== undefined && editor.update(latest) } : {}),
  });
  const update = (text: string) => {
    latest = text;
    if (opts.pull) editor.invalidate();
    else editor.update(text);
  };
  return { port, editor, update, staleSends };
}

function retryAfterRespected(port: RecordingReplyPort, retryAfterMs: number) {
  const requests = port.requests;
  requests.forEach((request, i) => {
    const next = requests[i + 1];
    if (request.outcome === "rate-limited" && next) {
      expect(next.start).toBeGreaterThanOrEqual((request.end ?? request.start) + retryAfterMs);
    }
  });
}

describe("throttled editor properties", () => {
  it("paces, coalesces, honours 429s and always lands the final text", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          interval: fc.integer({ min: 50, max: 3000 }),
          latency: fc.integer({ min: 0, max: 1500 }),
          updates: fc.array(
            fc.record({
              delay: fc.integer({ min: 0, max: 1200 }),
              text: fc.constantFrom("a", "ab", "abc", "abcd", "initial", "x"),
            }),
            { maxLength: 25 },
          ),
          limited: fc.integer({ min: 0, max: 4 }),
          limitedAfter: fc.integer({ min: 0, max: 6 }),
          retryAfterMs: fc.integer({ min: 1, max: 4000 }),
          final: fc.constantFrom("final answer", "abc", "a"),
          pull: fc.boolean(),
        }),
        async (c) => {
          const { port, editor, update, staleSends } = setup({
            interval: c.interval,
            latency: c.latency,
            pull: c.pull,
          });
          const driver = (async () => {
            for (const [i, u] of c.updates.entries()) {
              if (i === c.limitedAfter) port.failNext(c.limited, () => new RateLimitedError(c.retryAfterMs));
              await sleep(u.delay);
              update(u.text);
            }
          })();
          await vi.runAllTimersAsync();
          await driver;
          const done = editor.flush(c.final);
          await vi.runAllTimersAsync();
          await done;

          const message = port.messages()[0];
          expect(message).toMatchObject({ text: c.final, final: true }); // the final text always lands
          expect(port.violations).toEqual([]); // never two requests inside the interval
          expect(port.maxInFlight).toBeLessThanOrEqual(1); // never more than one in flight
          expect(port.noOpEdits).toBe(0); // never an edit that changes nothing
          expect(staleSends).toEqual([]); // never a stale text
          retryAfterRespected(port, c.retryAfterMs);
          const failedByUs = port.requests.filter((r) => r.outcome !== "ok").length;
          expect(port.requests.length - failedByUs).toBeLessThanOrEqual(c.updates.length + 1); // coalesced
        },
      ),
      { numRuns: 80 },
    );
  });
});

describe("throttled editor", () => {
  it("coalesces a burst of updates into the newest text, one interval after the previous request finished", async () => {
    const { port, editor, update } = setup({ interval: 1000, latency: 100 });
    update("x");
    await vi.advanceTimersByTimeAsync(0);
    for (let i = 2; i <= 50; i++) update("x".repeat(i)); // 49 tokens while the first edit is in flight
    await vi.advanceTimersByTimeAsync(0);
    expect(port.requests.map((r) => r.content.text)).toEqual(["x"]);
    await vi.runAllTimersAsync();
    expect(port.requests.map((r) => r.content.text)).toEqual(["x", "x".repeat(50)]);
    // Spaced from the first request's completion (latency 100 ms), so arrivals can never be closer than the interval.
    expect(port.requests[1]!.start - port.requests[0]!.end!).toBe(1000);
    const done = editor.flush("x".repeat(50));
    await vi.runAllTimersAsync();
    await done;
  });

  it("arms the next request only after the previous one finished", async () => {
    const { port, editor, update } = setup({ interval: 100, latency: 2000 });
    update("one");
    await vi.advanceTimersByTimeAsync(10);
    update("two");
    await vi.advanceTimersByTimeAsync(1500);
    expect(port.requests).toHaveLength(1); // "one" is still in flight, far past the interval
    await vi.runAllTimersAsync();
    expect(port.requests.map((r) => r.content.text)).toEqual(["one", "two"]);
    expect(port.requests[1]!.start).toBeGreaterThanOrEqual(port.requests[0]!.end!);
    const done = editor.flush("two");
    await vi.runAllTimersAsync();
    await done;
    // The final flag still needs one request even though the text is the same (the Stop button goes away).
    expect(port.requests.map((r) => [r.content.text, r.final])).toEqual([
      ["one", false],
      ["two", false],
      ["two", true],
    ]);
  });

  it("a cancel stops an intermediate's wait at once, and later texts still wait their turn and go out", async () => {
    const { port, editor, update } = setup({ interval: 1000, latency: 0 });
    update("one");
    await vi.advanceTimersByTimeAsync(0);
    update("two"); // waits for the slot, due 1000 ms after "one"
    await vi.advanceTimersByTimeAsync(300);
    await editor.cancel(); // resolves without waiting out the slot
    await vi.advanceTimersByTimeAsync(2000);
    expect(port.requests.map((r) => r.content.text)).toEqual(["one"]);
    for (const text of ["three", "four"]) {
      update(text);
      await vi.advanceTimersByTimeAsync(1000);
    }
    expect(port.requests.map((r) => r.content.text)).toEqual(["one", "three", "four"]);
    expect(port.requests[2]!.start - port.requests[1]!.start).toBeGreaterThanOrEqual(1000);
    const done = editor.flush("four");
    await vi.runAllTimersAsync();
    await done;
  });

  it("waits out a 429 and then sends the newest text, not the refused one", async () => {
    const { port, editor, update } = setup({ interval: 100, latency: 0 });
    port.failNext(1, () => new RateLimitedError(5000));
    update("old");
    await vi.advanceTimersByTimeAsync(1000);
    update("new");
    await vi.advanceTimersByTimeAsync(3000);
    expect(port.requests).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1000);
    expect(port.requests.map((r) => [r.content.text, r.outcome])).toEqual([
      ["old", "rate-limited"],
      ["new", "ok"],
    ]);
    const done = editor.flush("new");
    await vi.runAllTimersAsync();
    await done;
  });

  it("never sends an intermediate after the final, even when the intermediate was refused with a 429 meanwhile", async () => {
    const { port, editor, update } = setup({ interval: 50, latency: 20 });
    port.failNext(1, () => new RateLimitedError(100));
    update("intermediate");
    await vi.advanceTimersByTimeAsync(5); // in flight
    const done = editor.flush("final");
    update("too late");
    await vi.runAllTimersAsync();
    await done;
    expect(port.requests.map((r) => [r.content.text, r.outcome])).toEqual([
      ["intermediate", "rate-limited"],
      ["final", "ok"],
    ]);
    expect(port.messages()[0]).toMatchObject({ text: "final", final: true });
  });

  it("retries a transient failure of the final text a bounded number of times, then fails flush", async () => {
    const { port, editor } = setup({ interval: 10, latency: 0, maxTransientRetries: 2 });
    port.failNext(2, () => new Error("socket hang up"));
    const landed = editor.flush("final");
    await vi.runAllTimersAsync();
    await landed;
    expect(port.messages()[0]?.text).toBe("final");

    const second = setup({ interval: 10, latency: 0, maxTransientRetries: 2 });
    second.port.failNext(3, () => new Error("socket hang up"));
    const failed = second.editor.flush("final");
    const outcome = failed.then(
      () => "landed",
      (e: Error) => e.message,
    );
    await vi.runAllTimersAsync();
    expect(await outcome).toBe("socket hang up");
    expect(second.port.requests).toHaveLength(3);
  });

  it("surfaces rejected content of the final text at once, and skips a rejected intermediate", async () => {
    const { port, editor, update } = setup({ interval: 10, latency: 0 });
    port.failNext(1, () => new RejectedContentError("can't parse entities"));
    update("bad");
    await vi.runAllTimersAsync();
    update("bad"); // the same text again is not retried
    await vi.runAllTimersAsync();
    expect(port.requests).toHaveLength(1);

    port.failNext(1, () => new RejectedContentError("can't parse entities"));
    const done = editor.flush("also bad");
    const outcome = done.then(
      () => "landed",
      (e: unknown) => (e instanceof RejectedContentError ? "rejected" : "other"),
    );
    await vi.runAllTimersAsync();
    expect(await outcome).toBe("rejected");
    expect(port.requests).toHaveLength(2);
  });

  it("keeps an expiring preview alive on refresh although its text is unchanged", async () => {
    const { port, editor, update } = setup({ interval: 10, latency: 0 });
    update("draft");
    await vi.runAllTimersAsync();
    editor.refresh();
    await vi.runAllTimersAsync();
    expect(port.requests.map((r) => r.content.text)).toEqual(["draft", "draft"]);
  });
});

describe("throttled editor, pull mode (invalidate + produce)", () => {
  /** An editor whose owner only invalidates; `produce` hands over the model's text as it is at that moment. */
  function pullSetup(opts: { interval: number; latency: number }) {
    const port = createRecordingReplyPort({
      flavour: "plain",
      limits: { minEditIntervalMs: opts.interval },
      latencyMs: opts.latency,
      existing: ["initial"],
    });
    const gate = createLocalRateGate({ minIntervalMs: opts.interval });
    const model = { text: "" };
    let produced = 0;
    const editor = createThrottledEditor<string>({
      chatKey: "chat",
      gate,
      visible: "initial",
      apply: (text, { final, signal }) => port.edit("m1", { text }, { final, ...(signal ? { signal } : {}) }),
      produce: () => {
        produced++;
        editor.update(model.text);
      },
    });
    return { port, editor, model, produced: () => produced };
  }

  it("renders at send time: one produce per request, and each request carries what existed when it started", async () => {
    const { port, editor, model, produced } = pullSetup({ interval: 1000, latency: 7 });
    const written: { at: number; text: string }[] = [];
    const driver = (async () => {
      for (let i = 1; i <= 100; i++) {
        await sleep(30);
        model.text += `w${i} `;
        written.push({ at: Date.now(), text: model.text });
        editor.invalidate();
      }
    })();
    await vi.advanceTimersByTimeAsync(3000);
    await driver;
    const done = editor.flush(model.text);
    await vi.runAllTimersAsync();
    await done;

    const intermediates = port.requests.filter((r) => !r.final);
    expect(intermediates.length).toBeGreaterThanOrEqual(2);
    // Rendering is asked for once per request (not once per change): 100 changes, a handful of renders.
    expect(produced()).toBe(intermediates.length);
    for (const request of intermediates) {
      // The freshest text: everything the model had written when the request started, nothing older.
      const newest = written.filter((w) => w.at <= request.start).at(-1)?.text;
      expect(request.content.text).toBe(newest);
    }
    expect(port.violations).toEqual([]);
    expect(port.messages()[0]).toMatchObject({ text: model.text, final: true });
  });

  it("sends nothing when what produce hands over is already visible, and never asks after flush", async () => {
    const { port, editor, model, produced } = pullSetup({ interval: 10, latency: 0 });
    model.text = "initial"; // what the message shows already
    editor.invalidate();
    await vi.runAllTimersAsync();
    expect(produced()).toBe(1);
    expect(port.requests).toEqual([]);

    model.text = "more";
    const done = editor.flush("final");
    editor.invalidate();
    await vi.runAllTimersAsync();
    await done;
    expect(produced()).toBe(1);
    expect(port.requests.map((r) => [r.content.text, r.final])).toEqual([["final", true]]);
  });
});
