/** The BotGateway adapters get: neither /reset nor /stop waits in the queue. */
import type { BotGateway } from "../contracts/bot-gateway.js";
import type { CancelBus } from "../queue/cancel-bus.js";
import type { MessageQueue } from "../queue/message-queue.js";

/** Joins the three Redis-backed pieces into the adapters' gateway. */
export function createBotGateway(deps: {
  queue: Pick<MessageQueue, "enqueue">;
  history: { reset(conversationKey: string): Promise<void> };
  cancelBus: Pick<CancelBus, "stop">;
  /** `/compact`: folds old turns into the summary and says what it kept. */
  compact?: BotGateway["compact"];
}): BotGateway {
  return {
    enqueue: (message) => deps.queue.enqueue(message),
    reset: (conversationKey) => deps.history.reset(conversationKey),
    stop: (conversationKey) => deps.cancelBus.stop(conversationKey),
    ...(deps.compact ? { compact: deps.compact } : {}),
  };
}
