/**
 * The shared rate gate's view of every platform's pacing: a pacing key (`reply/rate-gate.ts`) names
 * the platform, the chat and the lane, and the platform's own rules (in its adapter) say the rest.
 */
import type { Platform } from "../contracts/inbound-message.js";
import type { GlobalBudget, PlatformPacing } from "../contracts/platform-pacing.js";
import { parsePacingKey } from "../reply/rate-gate.js";
import { discordPacing, type ObservedDiscordIntervals } from "../adapters/discord/discord-pacing.js";
import { telegramPacing } from "../adapters/telegram/telegram-pacing.js";

export {
  TELEGRAM_DRAFT_INTERVAL_MS,
  TELEGRAM_GLOBAL_PER_SECOND,
  TELEGRAM_GROUP_EDIT_INTERVAL_MS as TELEGRAM_GROUP_INTERVAL_MS,
  TELEGRAM_PRIVATE_EDIT_INTERVAL_MS as TELEGRAM_PRIVATE_INTERVAL_MS,
} from "../adapters/telegram/telegram-pacing.js";

/** Every platform's rules; Discord's with what its REST client has learned from the headers. */
export function platformPacings(discord?: ObservedDiscordIntervals): Partial<Record<Platform, PlatformPacing>> {
  return { telegram: telegramPacing, discord: discordPacing(discord) };
}

/** The interval function for the rate gate (a platform without rules is not paced). */
export function pacingIntervalFor(discord?: ObservedDiscordIntervals): (chatKey: string) => number {
  const pacings = platformPacings(discord);
  return (chatKey) => {
    const { platform, chatId, lane } = parsePacingKey(chatKey);
    return pacings[platform as Platform]?.intervalMs(chatId, lane) ?? 0;
  };
}

/** The bot-wide budget of a pacing key: one per platform (and one for Telegram's drafts), shared by every chat and worker process. */
export function pacingGlobalFor(chatKey: string): GlobalBudget | undefined {
  const { platform, lane } = parsePacingKey(chatKey);
  return platformPacings()[platform as Platform]?.globalBudget(lane);
}
