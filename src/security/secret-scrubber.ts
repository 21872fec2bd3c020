/**
 * Blanks the bot's own secrets out of text: any run of `minFragment` characters of one counts (a token cut by
 * an ellipsis or split by Markdown is still caught), ignoring ASCII case, in plain and URL-encoded form. A looser
 * check also ignores formatting and zero-width marks, for secrets chopped into short pieces by markup.
 */

/** Text shown in place of a secret. */
export const REDACTED = "[redacted]";

/** Shorter values are placeholders ("ollama", "sk-local", "EMPTY"): blanking them would mangle ordinary answers. */
export const MIN_SECRET_CHARS = 10;

/** Characters markup can slip between the characters of a secret without changing what a reader copies. */
const FORMATTING = /[*_~|`\\\u200b-\u200d\u2060\ufeff]/g;

/** The text without Markdown markers and zero-width marks (what a reader would copy out of the rendered message). */
export function withoutFormatting(text: string): string {
  return text.replace(FORMATTING, "");
}

/** Scrubs a fixed set of secrets from text. */
export interface SecretScrubber {
  /** The text with every secret (and every long enough piece of one) replaced by REDACTED. */
  scrub(text: string): string;
  /** True when `scrub` would change the text. */
  has(text: string): boolean;
  /** Where `scrub` would blank the text: [start, end) ranges, in order, none touching another. */
  ranges(text: string): [number, number][];
  /** How many of the text's last characters (fewer than `minFragment`) a secret contains: the text may go on into it. */
  secretTail(text: string): number;
  /** True when the text holds a secret once formatting characters are ignored (a looser check than `has`). */
  hasLoosely(text: string): boolean;
  /** The shortest run of a secret's characters that counts as a leak. */
  readonly minFragment: number;
}

/** The shortest run of a secret's characters that counts as a leak. */
const MIN_FRAGMENT = 12;

/** Builds a scrubber for the given values; undefined, empty and placeholder-short values are ignored. */
export function createSecretScrubber(values: readonly (string | undefined)[]): SecretScrubber {
  const k = MIN_FRAGMENT;
  const given = values.filter((v): v is string => typeof v === "string" && v.trim().length >= MIN_SECRET_CHARS);
  const secrets = [...new Set(given.flatMap((s) => [s, encodeURIComponent(s)]).map(foldCase))];
  const loose = [...new Set(secrets.map(withoutFormatting).filter((s) => s.length >= MIN_SECRET_CHARS))];
  const exact = createMatcher(secrets, k);
  const relaxed = createMatcher(loose, k);
  return {
    scrub: (text) => replaceRanges(text, exact(foldCase(text))),
    has: (text) => exact(foldCase(text)).length > 0,
    ranges: (text) => exact(foldCase(text)),
    secretTail: (text) => {
      const end = foldCase(text.slice(-(k - 1)));
      for (let n = end.length; n > 0; n--) if (secrets.some((s) => s.includes(end.slice(-n)))) return n;
      return 0;
    },
    hasLoosely: (text) => exact(foldCase(text)).length > 0 || relaxed(foldCase(withoutFormatting(text))).length > 0,
    minFragment: k,
  };
}

type Matcher = (text: string) => [number, number][];

/** ASCII letters lower-cased; every other character kept, so offsets in the result are offsets in the text. */
function foldCase(text: string): string {
  return /[A-Z]/.test(text) ? text.replace(/[A-Z]+/g, (run) => run.toLowerCase()) : text;
}

/** Multiplier of the rolling hash (odd, so no bits are lost mod 2^32). */
const BASE = 0x01000193;
/** Bits of the hash filters' index: 2^16 bits (8 KiB) keep false hits rare for a few hundred grams. */
const FILTER_BITS = 16;

/** Hash of text[from, from + k), the same value the rolling update produces. */
function hashAt(text: string, from: number, k: number): number {
  let h = 0;
  for (let i = from; i < from + k; i++) h = (Math.imul(h, BASE) + text.charCodeAt(i)) | 0;
  return h;
}

/** A bit set indexed by the top bits of a hash: no false negatives, rare false positives. */
function hashFilter(): { add(h: number): void; has(h: number): boolean } {
  const bits = new Uint32Array((1 << FILTER_BITS) >>> 5);
  return {
    add(h) {
      const slot = h >>> (32 - FILTER_BITS);
      bits[slot >>> 5]! |= 1 << (slot & 31);
    },
    has(h) {
      const slot = h >>> (32 - FILTER_BITS);
      return (bits[slot >>> 5]! & (1 << (slot & 31))) !== 0;
    },
  };
}

/**
 * Every k-gram of every secret, mapped to where it occurs, so one pass over the text finds any fragment.
 * It runs on every render of a reply, so the no-secret case must be cheap: any k secret characters include
 * an `anchor`-gram starting at a multiple of `step`, so a first pass checks only those; only a hit there runs
 * the full pass (a rolling hash of every k-gram, a map lookup on a filter hit, the match grown both ways).
 */
function createMatcher(secrets: readonly string[], k: number): Matcher {
  const step = Math.max(1, k >> 1);
  const anchor = k - step + 1;
  const grams = new Map<string, { secret: string; at: number }[]>();
  const gramFilter = hashFilter();
  const anchors = new Set<string>();
  const anchorFilter = hashFilter();
  const short: string[] = [];
  for (const secret of secrets) {
    if (secret.length < k) {
      short.push(secret);
      continue;
    }
    for (let at = 0; at + k <= secret.length; at++) {
      const gram = secret.slice(at, at + k);
      const list = grams.get(gram) ?? [];
      list.push({ secret, at });
      grams.set(gram, list);
      gramFilter.add(hashAt(secret, at, k));
    }
    for (let at = 0; at + anchor <= secret.length; at++) {
      anchors.add(secret.slice(at, at + anchor));
      anchorFilter.add(hashAt(secret, at, anchor));
    }
  }
  // BASE^(k-1) mod 2^32: the weight of the character leaving the window.
  let outWeight = 1;
  for (let i = 1; i < k; i++) outWeight = Math.imul(outWeight, BASE);

  /** True when some step-th position starts a piece of a secret (always true when the text holds a k-gram of one). */
  const anchored = (text: string): boolean => {
    for (let q = 0; q + anchor <= text.length; q += step) {
      if (anchorFilter.has(hashAt(text, q, anchor)) && anchors.has(text.slice(q, q + anchor))) return true;
    }
    return false;
  };

  const fullPass = (text: string, ranges: [number, number][]) => {
    const n = text.length;
    let h = hashAt(text, 0, k);
    let p = 0;
    while (p + k <= n) {
      const hits = gramFilter.has(h) ? grams.get(text.slice(p, p + k)) : undefined;
      if (hits) {
        let furthest = p + k;
        for (const { secret, at } of hits) {
          // Grow the match both ways along the secret: the whole leaked run goes, not just k characters.
          let left = 0;
          while (p - left - 1 >= 0 && at - left - 1 >= 0 && text[p - left - 1] === secret[at - left - 1]) left++;
          let right = 0;
          while (p + k + right < n && at + k + right < secret.length && text[p + k + right] === secret[at + k + right])
            right++;
          ranges.push([p - left, p + k + right]);
          furthest = Math.max(furthest, p + k + right);
        }
        // Resume right after the covered run's first k-gram boundary.
        p = furthest - k + 1;
        if (p + k <= n) h = hashAt(text, p, k);
        continue;
      }
      if (p + k < n)
        h = (Math.imul((h - Math.imul(text.charCodeAt(p), outWeight)) | 0, BASE) + text.charCodeAt(p + k)) | 0;
      p++;
    }
  };

  return (text) => {
    const ranges: [number, number][] = [];
    for (const secret of short) {
      for (let i = text.indexOf(secret); i !== -1; i = text.indexOf(secret, i + 1)) ranges.push([i, i + secret.length]);
    }
    if (grams.size > 0 && text.length >= k && anchored(text)) fullPass(text, ranges);
    return ranges.length === 0 ? ranges : merge(ranges);
  };
}

function merge(ranges: [number, number][]): [number, number][] {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  for (const [start, end] of sorted) {
    const last = out[out.length - 1];
    if (last && start <= last[1]) last[1] = Math.max(last[1], end);
    else out.push([start, end]);
  }
  return out;
}

function replaceRanges(text: string, ranges: readonly [number, number][]): string {
  if (ranges.length === 0) return text;
  let out = "";
  let from = 0;
  for (const [start, end] of ranges) {
    out += text.slice(from, start) + REDACTED;
    from = end;
  }
  return out + text.slice(from);
}
