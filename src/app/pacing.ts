/** The shared rate gate's view of every platform's pacing rules (kept in its adapter), by pacing key. */
import type { Platform } from "../contracts/inbound-message.js";
import type { GlobalBudget, PlatformPacing } from "../contracts/platform-pacing.js";
import { parsePacingKey } from "../contracts/platform-pacing.js";
import { discordPacing, type ObservedDiscordIntervals } from "../bots/discord/discord-pacing.js";
import { telegramPacing } from "../bots/telegram/telegram-pacing.js";

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

// Bot-wide budgets do not depend on what a REST client has learned: one set of rules serves every call.
const budgetRules = platformPacings();

/** The bot-wide budget of a pacing key: one per platform, shared by every chat and worker process. */
export function pacingGlobalFor(chatKey: string): GlobalBudget | undefined {
  const { platform, lane } = parsePacingKey(chatKey);
  return budgetRules[platform as Platform]?.globalBudget(lane);
}

/** Whether a key is paced in the process alone: drafts, written only by the one process answering a private chat. */
export function pacingLocalOnly(chatKey: string): boolean {
  return parsePacingKey(chatKey).lane === "draft";
}
