/** Most timestamps inside any window of `windowMs`, closed on both ends (stricter than a platform's half-open window). */
export function busiestWindow(times: number[], windowMs: number): number {
  const sorted = [...times].sort((x, y) => x - y);
  let best = 0;
  let start = 0;
  for (let end = 0; end < sorted.length; end++) {
    while (sorted[end]! - sorted[start]! > windowMs) start++;
    best = Math.max(best, end - start + 1);
  }
  return best;
}
