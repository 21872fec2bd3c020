/**
 * Discord's limits, the one place they are written: a channel's message bucket is learned from
 * its `X-RateLimit-*` headers (5 writes per 5 s until told otherwise), and a bot may make 50
 * requests per second over all channels (the global rate limit).
 */
import type { GlobalBudget, PlatformPacing } from "../../contracts/platform-pacing.js";

/** Between two writes into a channel until its rate-limit headers say otherwise. */
export const DISCORD_DEFAULT_EDIT_INTERVAL_MS = 1000;
/** Requests per second per bot. */
export const DISCORD_GLOBAL_PER_SECOND = 50;

const GLOBAL: GlobalBudget = { key: "discord", perSecond: DISCORD_GLOBAL_PER_SECOND };

/** What the REST client has learned of a channel's bucket. */
export interface ObservedDiscordIntervals {
  observedIntervalMs(channelId: string): number | undefined;
}

/** Discord's pacing rules, with what `observed` has learned from the headers (none: the documented default). */
export function discordPacing(observed?: ObservedDiscordIntervals): PlatformPacing {
  return {
    intervalMs: (channelId) => observed?.observedIntervalMs(channelId) ?? DISCORD_DEFAULT_EDIT_INTERVAL_MS,
    globalBudget: () => GLOBAL,
  };
}
