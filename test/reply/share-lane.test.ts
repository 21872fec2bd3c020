/**
 * The lane paced in the process (drafts), with its share of the budget stubbed: what it asks of the share
 * (demand) and how it serves its chats at the allowance. Fake timers drive the clock; the Redis side of the
 * shares is tested with two processes in redis-rate-gate.test.ts.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import type { BudgetShare } from "../../src/reply/budget-share.js";
import { createShareLane, type ShareLane } from "../../src/reply/share-lane.js";
import { busiestWindow } from "../support/busiest-window.js";

afterEach(() => {
  vi.useRealTimers();
});

/** A share whose allowance the test sets; it records every demand the lane reports. */
function stubShare(initial: number | undefined) {
  const wanted: number[] = [];
  let allowance = initial;
  const share: BudgetShare = {
    get allowance() {
      return allowance;
    },
    want: (demand) => void wanted.push(demand),
  };
  return { share, wanted, set: (next: number | undefined) => (allowance = next) };
}

function laneWith(share: BudgetShare, opts: { interval?: number; shared?: () => boolean } = {}): ShareLane {
  return createShareLane({
    share: () => share,
    intervalFor: () => opts.interval ?? 250,
    windowMs: 1250,
    localNow: Date.now,
    shared: opts.shared ?? (() => true),
    floodChats: 3,
    floodWindowMs: 1000,
  });
}

/** When `promise` settles, in fake time: the timers run until it has. */
async function settledAt(promise: Promise<unknown>): Promise<number> {
  let at: number | undefined;
  void promise.then(() => (at = Date.now()));
  for (let i = 0; i < 1000 && at === undefined; i++) await vi.advanceTimersByTimeAsync(10);
  await promise;
  return at as number;
}

describe("createShareLane", () => {
  it("serves its chats first come first served at the allowance: never more than it in any window, every chat in turn", async () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const { share } = stubShare(20);
    const lane = laneWith(share);
    const grants: { chat: number; at: number }[] = [];
    let streaming = true;
    const streamers = Array.from({ length: 10 }, async (_, chat) => {
      while (streaming) {
        await lane.acquire(`telegram:${chat}:draft`);
        grants.push({ chat, at: Date.now() });
        lane.settled(`telegram:${chat}:draft`);
      }
    });
    await vi.advanceTimersByTimeAsync(10_000);
    streaming = false;
    await vi.advanceTimersByTimeAsync(5_000);
    await Promise.all(streamers);
    const times = grants.map((g) => g.at);
    expect(busiestWindow(times, 1250)).toBeLessThanOrEqual(20);
    // The allowance is used: 18 spacings of 1250 / 18 ms in a window, 10 s.
    expect(grants.length).toBeGreaterThan(140);
    // Ten chats wanting 4 a second share 14.4: each gets its turn, none more than twice another's.
    const perChat = Array.from({ length: 10 }, (_, chat) => grants.filter((g) => g.chat === chat).length);
    expect(Math.min(...perChat) * 2).toBeGreaterThan(Math.max(...perChat));
  });

  it("reports its demand when a chat starts and ends, and forgets a chat that went quiet without ending", async () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const { share, wanted } = stubShare(100);
    const lane = laneWith(share);
    await lane.acquire("telegram:1:draft");
    await lane.acquire("telegram:2:draft");
    // 1250 ms at one request per 250 ms: 5 a window per chat.
    expect(wanted).toEqual([5, 10]);
    lane.release("telegram:1:draft");
    expect(wanted.at(-1)).toBe(5);
    // Chat 2 never releases (its reply went wrong): once it has been quiet for a while, a new chat's arrival sweeps it.
    await vi.advanceTimersByTimeAsync(31_000);
    await lane.acquire("telegram:3:draft");
    expect(wanted.slice(-2)).toEqual([0, 5]);
  });

  it("waits for an allowance, and paces each chat alone when the budget cannot be shared (Redis away)", async () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const stub = stubShare(undefined);
    let shared = true;
    const lane = laneWith(stub.share, { shared: () => shared });
    let granted = false;
    const first = lane.acquire("telegram:1:draft").then(() => (granted = true));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(granted).toBe(false); // no answer from the share yet
    stub.set(10);
    lane.onShareChange();
    await first;
    await vi.advanceTimersByTimeAsync(0);
    // Redis goes away: requests go out at each chat's interval, with no bot-wide pacing.
    shared = false;
    const started = Date.now();
    expect((await settledAt(lane.acquire("telegram:1:draft"))) - started).toBe(250);
    const others = await Promise.all(
      ["telegram:2:draft", "telegram:3:draft", "telegram:4:draft"].map((key) => settledAt(lane.acquire(key))),
    );
    expect(others.map((at) => at - started)).toEqual([250, 250, 250]);
  });

  it("stops one chat after its 429, and every chat after 429s in three chats within a second", async () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const lane = laneWith(stubShare(100).share);
    await settledAt(Promise.all([1, 2, 3, 4].map((chat) => lane.acquire(`telegram:${chat}:draft`))));
    let started = Date.now();
    lane.backoff("telegram:1:draft", 2_000);
    const blocked = settledAt(lane.acquire("telegram:1:draft"));
    // Another chat is not held back by one chat's 429.
    expect((await settledAt(lane.acquire("telegram:2:draft"))) - started).toBeLessThan(300);
    expect((await blocked) - started).toBeGreaterThanOrEqual(2_000);
    started = Date.now();
    lane.backoff("telegram:1:draft", 3_000);
    lane.backoff("telegram:2:draft", 3_000);
    lane.backoff("telegram:3:draft", 3_000);
    expect((await settledAt(lane.acquire("telegram:4:draft"))) - started).toBeGreaterThanOrEqual(3_000);
  });

  it("rejects a waiting request when its signal aborts, and serves the next one", async () => {
    vi.useFakeTimers({ now: 1_000_000 });
    const lane = laneWith(stubShare(3).share);
    await lane.acquire("telegram:1:draft");
    await lane.acquire("telegram:2:draft"); // two back to back: the bucket's tolerance
    const controller = new AbortController();
    const waiting = lane.acquire("telegram:3:draft", controller.signal);
    const next = lane.acquire("telegram:4:draft");
    controller.abort(new Error("stopped"));
    await expect(waiting).rejects.toThrow("stopped");
    await vi.advanceTimersByTimeAsync(1_250);
    await next;
  });
});
