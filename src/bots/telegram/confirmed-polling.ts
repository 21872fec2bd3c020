/**
 * Long polling that confirms an update to Telegram only once it has been handled. Telegram forgets an
 * update once a getUpdates arrives with a higher `offset`, so the next getUpdates must wait until every
 * update of the batch is enqueued. Neither grammY loop does that: `bot.start()` confirms an update whose
 * middleware failed (and `bot.stop()` one still being enqueued), and the runner's concurrent sink fetches
 * the next batch while handlers still await Redis. So: the runner's fetcher and source with a *batch* sink.
 * Within a batch, chats run concurrently (`sequentialize` in the adapter keeps each chat in order).
 * `stop()` aborts the long poll without confirming; the rest comes again and the queue dedupes by job id.
 */
import type { Bot, Context } from "grammy";
import type { Update } from "grammy/types";
import { createBatchSink, createRunner, createSource, createUpdateFetcher } from "@grammyjs/runner";

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
  const runner = createRunner(source, sink);
  runner.start();
  const done = (runner.task() ?? Promise.resolve()).then(() => undefined);
  return {
    done,
    // runner.stop() returns nothing once the runner stopped already.
    async stop() {
      await runner.stop();
    },
  };
}
