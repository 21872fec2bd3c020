/**
 * llama-server's slots and prompt cache, for the fake model server: each slot keeps the tokens of
 * its last request (prompt and generated answer); a new request goes to the free slot whose
 * tokens share the longest common prefix with its prompt (llama-server's `--slot-prompt-similarity`,
 * default 0.1 of the prompt), else to the least recently used one, and only the tokens after that
 * prefix are processed. As llama-server does, the last prompt token is always processed again (it
 * yields the first logits), so a prompt read whole from the cache still costs one token.
 *
 * What the server reports: `timings.cache_n` (reused), `timings.prompt_n` (processed), and
 * `usage.prompt_tokens` = both, `usage.prompt_tokens_details.cached_tokens` = `cache_n`
 * (tools/server/server-task.cpp, `usage_json_oaicompat` and `result_timings::to_json`).
 */

/** One slot's cache. */
interface Slot {
  id: number;
  tokens: number[];
  lastUsed: number;
  busy: boolean;
}

/** What the cache did with one prompt. */
export interface SlotAdmission {
  slot: number;
  /** Prompt tokens. */
  promptTokens: number;
  /** Tokens taken from the slot's cache (`cache_n`). */
  cachedTokens: number;
  /** Tokens read again (`prompt_n`). */
  processedTokens: number;
  /** Frees the slot, keeping the prompt and the generated tokens as its cache. */
  release(generated: readonly number[]): void;
}

/** A server's slots. */
export interface LlamaSlots {
  admit(prompt: readonly number[]): SlotAdmission;
  /** Forgets every slot's cache (a restarted server). */
  clear(): void;
}

/** Length of the common prefix of two token arrays. */
export function commonPrefix(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/** Builds `slots` slots (llama-server's `-np`; 4 by default in current builds). */
export function createLlamaSlots(opts: { slots?: number; similarity?: number } = {}): LlamaSlots {
  const similarity = opts.similarity ?? 0.1;
  let clock = 0;
  const slots: Slot[] = Array.from({ length: Math.max(1, opts.slots ?? 4) }, (_, id) => ({
    id,
    tokens: [],
    lastUsed: 0,
    busy: false,
  }));

  const choose = (prompt: readonly number[]): Slot => {
    const free = slots.filter((s) => !s.busy);
    // Every slot busy: llama-server queues the task; the fake serves it on a fresh view of the least used slot.
    const pool = free.length > 0 ? free : slots;
    let best: Slot | undefined;
    let bestShare = 0;
    for (const slot of pool) {
      if (slot.tokens.length === 0) continue;
      const share = commonPrefix(slot.tokens, prompt) / Math.max(1, prompt.length);
      if (share > similarity && share > bestShare) {
        best = slot;
        bestShare = share;
      }
    }
    return best ?? pool.reduce((a, b) => (b.lastUsed < a.lastUsed ? b : a));
  };

  return {
    admit(prompt) {
      const slot = choose(prompt);
      slot.busy = true;
      slot.lastUsed = ++clock;
      const cached = Math.max(0, Math.min(commonPrefix(slot.tokens, prompt), prompt.length - 1));
      // The slot's cache now holds the common prefix; the rest is overwritten as the prompt is read.
      slot.tokens = [...prompt];
      return {
        slot: slot.id,
        promptTokens: prompt.length,
        cachedTokens: cached,
        processedTokens: prompt.length - cached,
        release(generated) {
          slot.tokens = [...prompt, ...generated];
          slot.busy = false;
        },
      };
    },
    clear() {
      for (const slot of slots) slot.tokens = [];
    },
  };
}
