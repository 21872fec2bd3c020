/** Percentiles and small numeric helpers for the benchmark's figures. */

/** The p-th percentile (0 < p ≤ 100) by nearest rank; undefined for no samples. */
export function percentile(samples: readonly number[], p: number): number | undefined {
  if (samples.length === 0) return undefined;
  const sorted = [...samples].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1];
}

/** Arithmetic mean; undefined for no samples. */
export function mean(samples: readonly number[]): number | undefined {
  if (samples.length === 0) return undefined;
  return samples.reduce((sum, x) => sum + x, 0) / samples.length;
}
