import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createLocalRateGate } from "../../src/reply/rate-gate.js";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

/** Acquires and records the fake time each slot was granted at. */
function grantLog() {
  const granted: { label: string; at: number }[] = [];
  const track = (label: string, p: Promise<void>) => p.then(() => granted.push({ label, at: Date.now() }));
  return { granted, track };
}

describe("createLocalRateGate", () => {
  it("spaces slots of one chat by the interval and leaves other chats alone", async () => {
    const gate = createLocalRateGate({ minIntervalMs: 1000 });
    const { granted, track } = grantLog();
    const start = Date.now();
    void track("a1", gate.acquire("a", "intermediate"));
    void track("a2", gate.acquire("a", "intermediate"));
    void track("a3", gate.acquire("a", "intermediate"));
    void track("b1", gate.acquire("b", "intermediate"));
    await vi.runAllTimersAsync();
    const at = (label: string) => (granted.find((g) => g.label === label)?.at ?? NaN) - start;
    expect(at("a1")).toBe(0);
    expect(at("b1")).toBe(0);
    expect(at("a2")).toBe(1000);
    expect(at("a3")).toBe(2000);
  });

  it("grants a final slot before intermediates that were waiting longer", async () => {
    const gate = createLocalRateGate({ minIntervalMs: 500 });
    const { granted, track } = grantLog();
    await gate.acquire("c", "intermediate");
    void track("i1", gate.acquire("c", "intermediate"));
    void track("i2", gate.acquire("c", "intermediate"));
    void track("f", gate.acquire("c", "final"));
    await vi.runAllTimersAsync();
    expect(granted.map((g) => g.label)).toEqual(["f", "i1", "i2"]);
  });

  it("uses a per-chat interval when given a function", async () => {
    const gate = createLocalRateGate({ minIntervalMs: (key) => (key.startsWith("group") ? 3000 : 1000) });
    const { granted, track } = grantLog();
    const start = Date.now();
    await gate.acquire("group:1", "intermediate");
    await gate.acquire("private:1", "intermediate");
    void track("g", gate.acquire("group:1", "intermediate"));
    void track("p", gate.acquire("private:1", "intermediate"));
    await vi.runAllTimersAsync();
    expect(granted).toEqual([
      { label: "p", at: start + 1000 },
      { label: "g", at: start + 3000 },
    ]);
  });

  it("holds every slot of a chat until a 429's retry-after has passed", async () => {
    const gate = createLocalRateGate({ minIntervalMs: 100 });
    const { granted, track } = grantLog();
    const start = Date.now();
    await gate.acquire("c", "intermediate");
    gate.backoff("c", 5000);
    void track("next", gate.acquire("c", "final"));
    await vi.advanceTimersByTimeAsync(4999);
    expect(granted).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(granted).toEqual([{ label: "next", at: start + 5000 }]);
  });

  it("rejects an aborted wait and does not let it hold a slot", async () => {
    const gate = createLocalRateGate({ minIntervalMs: 1000 });
    const { granted, track } = grantLog();
    await gate.acquire("c", "intermediate");
    const controller = new AbortController();
    const waiting = gate.acquire("c", "intermediate", controller.signal);
    void track("other", gate.acquire("c", "intermediate"));
    controller.abort(new Error("stop"));
    await expect(waiting).rejects.toThrow("stop");
    await vi.runAllTimersAsync();
    expect(granted.map((g) => g.label)).toEqual(["other"]);
    await expect(gate.acquire("c", "final", controller.signal)).rejects.toThrow("stop");
  });
});
