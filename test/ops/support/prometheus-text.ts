/**
 * Reads the Prometheus text exposition format the way a scraper does, so tests
 * assert on series (name + labels → value) rather than on substrings.
 */

/** One sample: metric name, its labels, its value. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parsed exposition: samples plus the TYPE line of every metric family. */
export interface Exposition {
  samples: Sample[];
  types: Map<string, string>;
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** Parses the text; throws on a line that is neither a comment nor a well-formed sample. */
export function parsePrometheusText(text: string): Exposition {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue;
    if (line.startsWith("#")) {
      const type = /^# TYPE (\S+) (\S+)$/.exec(line);
      if (type) types.set(type[1]!, type[2]!);
      continue;
    }
    const m = SAMPLE.exec(line);
    if (!m) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? "").matchAll(LABEL))
      labels[l[1]!] = l[2]!.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
    samples.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return { samples, types };
}

/** Sum of the samples named `name` whose labels include `labels` (0 when none). */
export function valueOf(exposition: Exposition, name: string, labels: Record<string, string> = {}): number {
  return exposition.samples
    .filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .reduce((sum, s) => sum + s.value, 0);
}

/** Whether any sample of `name` (with `labels`) exists. */
export function hasSeries(exposition: Exposition, name: string, labels: Record<string, string> = {}): boolean {
  return exposition.samples.some((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}
