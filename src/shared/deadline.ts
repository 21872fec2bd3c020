/**
 * Deadlines held for the whole call: once GC drops an `AbortSignal.timeout()` signal (undici holds its listener
 * weakly) its timer never fires; a Telegram file served at 1 byte/s once ran 123 s past a 30 s deadline.
 */

/** The reason a deadline aborts with: a DOMException named "TimeoutError", as `AbortSignal.timeout` uses. */
export function timeoutReason(ms: number): DOMException {
  return new DOMException(`The operation timed out after ${ms} ms`, "TimeoutError");
}

/** Runs `work` with a signal that aborts after `ms` or with `parent`; the timer is cleared when `work` settles. */
export async function withDeadline<T>(
  ms: number,
  work: (signal: AbortSignal) => Promise<T>,
  parent?: AbortSignal,
): Promise<T> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(timeoutReason(ms)), ms);
  const onAbort = () => controller.abort(parent?.reason);
  if (parent?.aborted) onAbort();
  else parent?.addEventListener("abort", onAbort, { once: true });
  try {
    return await work(controller.signal);
  } finally {
    clearTimeout(timer);
    parent?.removeEventListener("abort", onAbort);
  }
}

/** A drop-in for `AbortSignal.timeout(ms)` held strongly until it fires, for short one-off calls (doctor, probes). */
export function timeoutSignal(ms: number): AbortSignal {
  const controller = new AbortController();
  setTimeout(() => controller.abort(timeoutReason(ms)), ms).unref();
  return controller.signal;
}

/** The promise's value, or a rejection with `message` once `ms` passed without one (the promise itself runs on). */
export async function within<T>(ms: number, promise: Promise<T>, message = `no answer within ${ms} ms`): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(message)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
