/**
 * Last resort for every role: an unhandled rejection must not crash the process, and neither it nor an uncaught
 * exception may reach stderr through Node's crash dump, which prints every property of the error (grammY's
 * BotError carries the bot token). Both go through the scrubbing logger as name, message and stack only.
 */
import type { Logger } from "../observability/logger.js";

/** What of an unknown thrown value goes into the log: never its other properties. */
export function errorSummary(value: unknown): { type: string; message: string; stack?: string } {
  if (value instanceof Error)
    return { type: value.name, message: value.message, ...(value.stack ? { stack: value.stack } : {}) };
  return { type: typeof value, message: String(value) };
}

/** Options of the guards. */
export interface ProcessGuardOptions {
  /** After an uncaught exception the process state is unknown: shut down (default: exit 1). */
  onUncaughtException?: (error: unknown) => void;
  process?: NodeJS.Process;
}

/** Installs the handlers; returns a function that removes them (tests). */
export function installProcessGuards(logger: Logger, opts: ProcessGuardOptions = {}): () => void {
  const proc = opts.process ?? process;
  const onRejection = (reason: unknown) => {
    logger.error({ err: errorSummary(reason) }, "unhandled promise rejection; the process keeps running");
  };
  const onException = (error: unknown) => {
    logger.fatal({ err: errorSummary(error) }, "uncaught exception; shutting down");
    if (opts.onUncaughtException) opts.onUncaughtException(error);
    else proc.exit(1);
  };
  proc.on("unhandledRejection", onRejection);
  proc.on("uncaughtException", onException);
  return () => {
    proc.off("unhandledRejection", onRejection);
    proc.off("uncaughtException", onException);
  };
}
