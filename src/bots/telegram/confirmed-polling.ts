/**
 * Long polling that confirms an update to Telegram only once it has been handled.
 *
 * Telegram forgets an update as soon as a getUpdates call arrives with an `offset` above
 * its update_id; nothing else confirms it. So "a crash loses nothing" means: never send
 * the next getUpdates before every update of the current batch is safely enqueued.
 *
 * - `bot.start()` handles a batch sequentially before fetching the next one (good), but it
 *   moves `lastTriedUpdateId` *before* running the middleware, so a middleware failure
 *   that reaches `bot.catch` is confirmed with the next call, and `bot.stop()` confirms
 *   `lastTriedUpdateId + 1` at once, even while that update's enqueue is still running.
 * - `run(bot)` from @grammyjs/runner uses a *concurrent* sink: it fetches (and so confirms)
 *   the next batch while handlers of the previous one are still awaiting Redis.
 *
 * So we assemble the runner's parts differently: its update fetcher and source, but a
 * *batch* sink, which resolves only when every update of the batch has been handled;
 * the runner asks the source for the next batch (the confirming getUpdates) only then.
 * Inside a batch, updates of different chats run concurrently and `sequentialize` in the
 * adapter keeps one chat's updates in order. `stop()` aborts the pending long poll and
 * never sends a confirming call, so whatever was not handled is delivered again on the
 * next start; the queue deduplicates by job id.
 */
import type { Bot, Context } from "grammy";
import type { Update } from "grammy/types";
import { createBatchSink, createRunner, createSource, createUpdateFetcher, type RunnerHandle } from "@grammyjs/runner";

/** Options of the polling loop. */
export interface ConfirmedPollingOptions {
  /** Long-poll timeout in seconds (Telegram holds the request this long when idle). */
  timeoutSeconds: number;
  allowedUpdates: ReadonlyArray<Exclude<keyof Update, "update_id">>;
  /** Called when handling an update failed (the handler should not fail; this is the last resort log). */
  onHandlerError(error: unknown): void;
}

/** A running poll loop. */
export interface ConfirmedPolling {
  /** Settles when polling ends: resolves after stop(), rejects on an unrecoverable error (401, 409). */
  readonly done: Promise<void>;
  /** Aborts the long poll and waits for the batch being handled; sends no confirming request. */
  stop(): Promise<void>;
}

/** Starts polling `bot` (which must be initialised: bot.init()). */
export function startConfirmedPolling<C extends Context>(bot: Bot<C>, opts: ConfirmedPollingOptions): ConfirmedPolling {
  const fetchUpdates = createUpdateFetcher(bot, {
    fetch: { timeout: opts.timeoutSeconds, allowed_updates: opts.allowedUpdates },
    // Telegram outages can last; keep trying (the pause grows by 100 ms per failure), never give up.
    retryInterval: "quadratic",
    maxRetryTime: Number.POSITIVE_INFINITY,
    // Failures are logged by the adapter's API transformer, not printed to stderr.
    silent: true,
  });
  const source = createSource<Update>({ supply: (batchSize, signal) => fetchUpdates(batchSize, signal) });
  const sink = createBatchSink<Update>({ consume: (update) => bot.handleUpdate(update) }, async (error) =>
    opts.onHandlerError(error),
  );
  const runner: RunnerHandle = createRunner(source, sink);
  runner.start();
  const done = (runner.task() ?? Promise.resolve()).then(() => undefined);
  return {
    done,
    async stop() {
      await runner.stop();
    },
  };
}
