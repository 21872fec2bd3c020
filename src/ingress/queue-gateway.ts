/**
 * The BotGateway adapters get: enqueue through the message queue, /reset through
 * the history store, /stop through the cancel bus. Neither command waits in the queue.
 */
import type { BotGateway } from "../contracts/bot-gateway.js";
import type { CancelBus } from "../queue/cancel-bus.js";
import type { MessageQueue } from "../queue/message-queue.js";

/** Joins the three Redis-backed pieces into the adapters' gateway. */
export function createBotGateway(deps: {
  queue: Pick<MessageQueue, "enqueue">;
  history: { reset(conversationKey: string): Promise<void> };
  cancelBus: Pick<CancelBus, "stop">;
}): BotGateway {
  return {
    enqueue: (message) => deps.queue.enqueue(message),
    reset: (conversationKey) => deps.history.reset(conversationKey),
    stop: (conversationKey) => deps.cancelBus.stop(conversationKey),
  };
}
