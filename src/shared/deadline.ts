/**
 * A deadline for one call, held for the whole call. `AbortSignal.timeout()` is only weakly held: once
 * garbage collection drops its signal (undici keeps its listener weakly) the timer never fires, and a
 * Telegram file served at 1 byte/s held an answer for 123 s past its 30 s deadline. Here the timer
 * holds the controller, and the timer is cleared when the call ends.
 */

/** The reason a deadline aborts with: a DOMException named "TimeoutError", as `AbortSignal.timeout` uses. */
export function timeoutReason(ms: number): DOMException {
  return new DOMException(`The operation timed out after ${ms} ms`, "TimeoutError");
}

/**
 * Runs `work` with a signal that aborts after `ms`, or as soon as `parent` does (with the parent's
 * reason). The timer is cleared when `work` settles, so nothing outlives the call.
 */
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

/**
 * A drop-in for `AbortSignal.timeout(ms)` that is held strongly until it fires: the (unref'd) timer
 * holds its controller. For short one-off calls (the doctor, a health probe); a call that can end
 * early uses withDeadline, which clears its timer.
 */
export function timeoutSignal(ms: number): AbortSignal {
  const controller = new AbortController();
  setTimeout(() => controller.abort(timeoutReason(ms)), ms).unref();
  return controller.signal;
}
