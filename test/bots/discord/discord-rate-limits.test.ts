/** Reading Discord's rate-limit headers: bucket identity, "would this be refused now?", and edit spacing. */
import { describe, expect, test } from "vitest";
import { createRateLimitTracker, routeIdentity } from "../../../src/bots/discord/discord-rate-limits.js";

const headers = (h: Record<string, string>): Headers => new Headers(h);
const bucket = (limit: number, remaining: number, resetAfterS: number, hash = "abc") =>
  headers({
    "x-ratelimit-limit": String(limit),
    "x-ratelimit-remaining": String(remaining),
    "x-ratelimit-reset-after": String(resetAfterS),
    "x-ratelimit-bucket": hash,
  });

describe("routeIdentity", () => {
  test("keeps the top-level channel id as the major parameter and generalises the rest", () => {
    expect(routeIdentity("/channels/111111111111111111/messages/222222222222222222")).toEqual({
      route: "/channels/:id/messages/:id",
      major: "111111111111111111",
    });
    expect(routeIdentity("/interactions/333333333333333333/secret-token/callback?with_response=false")).toEqual({
      route: "/interactions/:id/:token/callback",
      major: "",
    });
  });
});

describe("createRateLimitTracker", () => {
  test("an exhausted bucket refuses until its reset, per channel", () => {
    let t = 1_000_000;
    const tracker = createRateLimitTracker(() => t);
    tracker.observe("POST", "/channels/100000/messages", bucket(5, 0, 2.5));
    expect(tracker.waitMs("POST", "/channels/100000/messages")).toBe(2500);
    expect(tracker.waitMs("POST", "/channels/200000/messages")).toBe(0);
    t += 2500;
    expect(tracker.waitMs("POST", "/channels/100000/messages")).toBe(0);
  });

  test("routes sharing a bucket hash share its state", () => {
    const tracker = createRateLimitTracker(() => 0);
    tracker.observe("POST", "/channels/100000/messages", bucket(5, 4, 5, "shared"));
    tracker.observe("PATCH", "/channels/100000/messages/300000", bucket(5, 0, 4, "shared"));
    expect(tracker.waitMs("POST", "/channels/100000/messages")).toBe(4000);
  });

  test("a 429 blocks for retry_after; a global one blocks every route", () => {
    let t = 0;
    const tracker = createRateLimitTracker(() => t);
    tracker.observe("PATCH", "/channels/100000/messages/300000", headers({}), 1200);
    expect(tracker.waitMs("PATCH", "/channels/100000/messages/300000")).toBe(1200);
    tracker.observe("POST", "/channels/100000/typing", headers({ "x-ratelimit-global": "true" }), 700);
    expect(tracker.waitMs("GET", "/users/@me")).toBe(700);
    t += 1200;
    expect(tracker.waitMs("PATCH", "/channels/100000/messages/300000")).toBe(0);
  });

  test("the write interval comes from the first response of a window (limit and full reset-after)", () => {
    const tracker = createRateLimitTracker(() => 0);
    expect(tracker.messageWriteIntervalMs("100000")).toBeUndefined();
    // Mid-window figures say nothing about the window's length.
    tracker.observe("POST", "/channels/100000/messages", bucket(5, 2, 1.2));
    expect(tracker.messageWriteIntervalMs("100000")).toBeUndefined();
    tracker.observe("POST", "/channels/100000/messages", bucket(5, 4, 5));
    expect(tracker.messageWriteIntervalMs("100000")).toBe(1000);
    // A stricter edit bucket wins.
    tracker.observe("PATCH", "/channels/100000/messages/300000", bucket(3, 2, 6, "edits"));
    expect(tracker.messageWriteIntervalMs("100000")).toBe(2000);
  });
});
