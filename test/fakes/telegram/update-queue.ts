/**
 * Queueing updates for the bot: an update_id from the running counter, the allowed_updates
 * filter (with the real server's default of leaving out chat_member and reactions), and
 * waking whoever reads the queue (the waiting long poll or the webhook delivery).
 */
import type { TelegramState } from "./state.js";

const DEFAULT_UPDATE_TYPES_EXCLUDED = new Set(["chat_member", "message_reaction", "message_reaction_count"]);

/** Queues a raw update; returns its id, or undefined if allowed_updates filters it out. */
export type PushUpdate = (update: Record<string, unknown>) => number | undefined;

/** Whether the bot asked for updates of this type. */
function wants(state: TelegramState, type: string): boolean {
  if (state.allowedUpdates === undefined || state.allowedUpdates.length === 0)
    return !DEFAULT_UPDATE_TYPES_EXCLUDED.has(type);
  return state.allowedUpdates.includes(type);
}

/** The queue's entry point; `kickWebhook` starts a delivery when a webhook is set. */
export function createPushUpdate(state: TelegramState, kickWebhook: () => void): PushUpdate {
  return (update) => {
    const type = Object.keys(update).find((k) => k !== "update_id") ?? "unknown";
    if (!wants(state, type)) return undefined;
    const updateId = state.nextUpdateId++;
    state.queue.push({ update_id: updateId, type, update: { update_id: updateId, ...update } });
    const poller = state.poller;
    if (poller && state.queue.length > 0) poller.finish(state.queue.slice(0, poller.limit));
    kickWebhook();
    state.changed();
    return updateId;
  };
}
