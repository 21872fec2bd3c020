/** The log calls the queue runtime makes (a pino Logger fits). */
export interface QueueLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** A logger that drops everything (the runtime's default). */
export const silentLogger: QueueLogger = { info: () => undefined, warn: () => undefined, error: () => undefined };

/** One line for an error, without its stack. */
export function errorSummary(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
