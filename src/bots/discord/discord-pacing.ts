/** Discord's limits, the one place they are written (a channel's bucket is learned from its headers). */
import type { GlobalBudget, PlatformPacing } from "../../contracts/platform-pacing.js";

/** Between two writes into a channel until its rate-limit headers say otherwise. */
export const DISCORD_DEFAULT_EDIT_INTERVAL_MS = 1000;
/** Discord's global rate limit: requests per second per bot, over all channels. */
const GLOBAL: GlobalBudget = { key: "discord", perSecond: 50 };

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
