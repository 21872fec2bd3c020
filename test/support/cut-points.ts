/** Re-chunking for property tests: the same text cut at arbitrary places, as a server's fragmentation would. */

/** Cuts `s` by code point (servers never split one) at positions derived from `seeds`; joined, the pieces are `s`. */
export function cutAt(s: string, seeds: readonly number[]): string[] {
  const chars = Array.from(s);
  if (chars.length === 0) return [];
  const points = [...new Set(seeds.map((n) => n % (chars.length + 1)))]
    .filter((p) => p > 0 && p < chars.length)
    .sort((a, b) => a - b);
  const out: string[] = [];
  let prev = 0;
  for (const p of [...points, chars.length]) {
    out.push(chars.slice(prev, p).join(""));
    prev = p;
  }
  return out;
}
