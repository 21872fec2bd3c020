/**
 * Slows down guessing of the admin token: an address with too many wrong tokens in a window is refused (429)
 * until the window ends, right token or not. In memory: the dashboard is one process's page.
 */

/** Counts wrong tokens per client address. */
export interface FailedLoginThrottle {
  /** Seconds the address must still wait (0: it may try). */
  blockedFor(address: string): number;
  /** Records a wrong token from the address. */
  failed(address: string): void;
}

/** Wrong tokens allowed per address and window; addresses remembered at most (the oldest is forgotten first). */
const maxFailures = 5;
const windowMs = 60_000;
const maxAddresses = 10_000;

/** Builds a throttle with a fixed window per address; `now` is injectable for tests. */
export function createFailedLoginThrottle(opts: { now?: () => number } = {}): FailedLoginThrottle {
  const now = opts.now ?? Date.now;
  const windows = new Map<string, { since: number; failures: number }>();
  const current = (address: string) => {
    const entry = windows.get(address);
    if (entry && now() - entry.since >= windowMs) {
      windows.delete(address);
      return undefined;
    }
    return entry;
  };
  return {
    blockedFor(address) {
      const entry = current(address);
      if (!entry || entry.failures < maxFailures) return 0;
      return Math.max(1, Math.ceil((entry.since + windowMs - now()) / 1000));
    },
    failed(address) {
      const entry = current(address);
      if (entry) {
        entry.failures++;
        return;
      }
      // A flood of addresses (IPv6) must not grow the map without bound.
      if (windows.size >= maxAddresses) windows.delete(windows.keys().next().value as string);
      windows.set(address, { since: now(), failures: 1 });
    },
  };
}
