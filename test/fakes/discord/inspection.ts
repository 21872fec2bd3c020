/**
 * How a test looks at the fake: the messages visible in a channel, and waiting for a condition
 * (re-checked on every change the fake notices, and polled for things outside it).
 */
import type { FakeDiscord } from "../discord-server.js";
import type { DiscordState } from "./state.js";

/** The test's view of the world (see FakeDiscord for each). */
export function createInspection({
  messagesIn,
  world,
  requests,
  changes,
}: DiscordState): Pick<FakeDiscord, "messages" | "botMessages" | "waitFor"> {
  return {
    messages: (channelId) => [...messagesIn(channelId)],
    botMessages: (channelId) => messagesIn(channelId).filter((m) => m.author.id === world.bot.id),

    waitFor(probe, opts = {}) {
      const timeoutMs = opts.timeoutMs ?? 5000;
      return new Promise((resolve, reject) => {
        const check = (): boolean => {
          let value;
          try {
            value = probe();
          } catch (error) {
            cleanup();
            reject(error);
            return true;
          }
          if (value === undefined || value === null || value === false) return false;
          cleanup();
          resolve(value as never);
          return true;
        };
        const onChange = (): void => void check();
        const timer = setTimeout(() => {
          cleanup();
          const last = requests.slice(-5).map((r) => `${r.route} → ${r.status}`);
          reject(
            new Error(
              `fake discord: timed out after ${timeoutMs} ms waiting for ${opts.label ?? "condition"}; last requests: ${last.join(", ") || "none"}`,
            ),
          );
        }, timeoutMs);
        // Also poll: probes often look at things outside the fake (a recording gateway, Redis).
        const poll = setInterval(onChange, 10);
        const cleanup = (): void => {
          clearTimeout(timer);
          clearInterval(poll);
          changes.off("change", onChange);
        };
        changes.on("change", onChange);
        check();
      });
    },
  };
}
