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
  test("the write interval comes from the first response of a window (limit and full reset-after)", () => {
    const tracker = createRateLimitTracker();
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
