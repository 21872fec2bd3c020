/**
 * Token counts for the context budget from the best tokenizer available: the server's `/tokenize`, else Qwen3's in
 * process, else the estimate. One that is not offered is not asked again; one that fails is skipped for a while.
 * Counts are cached per text; a count on a reply's way never waits for a tokenizer to load.
 */
import type { ChatMessage } from "../contracts/chat-message.js";
import { estimateTextTokens } from "./token-estimate.js";
import { GENERATION_PROMPT_TEXT, messageTemplateText, toolsTemplateText } from "./chat-template-text.js";
import { TokenizeError } from "./server-tokenizer.js";
import type { TextTokenizer } from "./text-tokenizer.js";

/** How a count may be made. */
export interface CountOptions {
  signal?: AbortSignal;
  /** On a reply's way: a tokenizer still loading is skipped (the estimate answers, and is not remembered). */
  hurried?: boolean;
}

/** Counts text and messages as the model's tokenizer does. */
export interface TokenCounter {
  /** Tokens of a piece of text. */
  countText(text: string, opts?: CountOptions): Promise<number>;
  /** Tokens one message costs in the request (its chat-template framing included). */
  countMessage(message: ChatMessage, opts?: CountOptions): Promise<number>;
  /** Tokens the tool definitions add to the request, plus the assistant turn the server opens. */
  countTools(tools: readonly unknown[], opts?: CountOptions): Promise<number>;
  /** The tokenizer that answered last (`estimate` until one did). */
  readonly source: TextTokenizer["source"];
}

const ESTIMATE: TextTokenizer = { source: "estimate", count: async (text) => estimateTextTokens(text) };

/**
 * Whether a count can be true of this text: a token is at least one UTF-8 byte and at most a few dozen characters.
 * A broken `/tokenize` that said 2,000,000 for every text would make the budget drop the whole history.
 */
export function plausibleCount(text: string, tokens: number): boolean {
  if (!Number.isSafeInteger(tokens) || tokens < 0) return false;
  // A couple of tokens over the bytes for a server that adds a BOS or EOS of its own.
  return tokens <= Buffer.byteLength(text, "utf8") + 2 && tokens * 64 >= text.length;
}

/** Builds the counter over tokenizers in order of preference (the estimate is always last). */
export function createTokenCounter(opts: {
  tokenizers: readonly TextTokenizer[];
  /** Texts whose counts are remembered (least recently used ones are forgotten first). */
  cacheSize?: number;
  /** How long a failing tokenizer is skipped. */
  backoffMs?: number;
  now?: () => number;
  onFallback?: (from: TextTokenizer["source"], error: unknown) => void;
}): TokenCounter {
  const chain = [...opts.tokenizers, ESTIMATE];
  const cacheSize = opts.cacheSize ?? 4000;
  const backoffMs = opts.backoffMs ?? 5000;
  const now = opts.now ?? Date.now;
  const skipUntil = new Map<TextTokenizer, number>();
  const cache = new Map<string, number>();
  let source: TextTokenizer["source"] = "estimate";

  const countText = async (text: string, countOpts: CountOptions = {}): Promise<number> => {
    const { signal, hurried } = countOpts;
    const hit = cache.get(text);
    if (hit !== undefined) {
      cache.delete(text);
      cache.set(text, hit);
      return hit;
    }
    // While an earlier tokenizer may still answer, a later, costlier one (Qwen3, ~180 MB) is not loaded for this count.
    let earlierMayAnswer = false;
    for (const tokenizer of chain) {
      const skipped = skipUntil.get(tokenizer) ?? 0;
      if (skipped > now()) {
        if (skipped !== Number.POSITIVE_INFINITY) earlierMayAnswer = true;
        continue;
      }
      if ((hurried || earlierMayAnswer) && tokenizer.isReady && !tokenizer.isReady()) {
        // Not proven yet: on a reply's way, warm it for the next count; while an earlier one only backs off (a busy
        // server's /tokenize timed out), do not load it at all. The estimate stands in for this count.
        if (!earlierMayAnswer) void tokenizer.warm?.();
        earlierMayAnswer = true;
        continue;
      }
      try {
        const tokens = await tokenizer.count(text, signal);
        // A count that cannot be true: the tokenizer is skipped for a while, like one that failed.
        if (tokenizer !== ESTIMATE && !plausibleCount(text, tokens))
          throw new TokenizeError(
            `${tokenizer.source} tokenizer counted ${tokens} tokens for ${text.length} characters; using the next tokenizer`,
            false,
          );
        source = tokenizer.source;
        // An estimate stands in for one hurried count only: the real count comes once a tokenizer answers.
        if (tokenizer !== ESTIMATE) {
          cache.set(text, tokens);
          if (cache.size > cacheSize) cache.delete(cache.keys().next().value as string);
        }
        return tokens;
      } catch (error) {
        if (signal?.aborted) throw error;
        const forever = !(error instanceof TokenizeError) || error.notOffered;
        skipUntil.set(tokenizer, forever ? Number.POSITIVE_INFINITY : now() + backoffMs);
        if (!forever) earlierMayAnswer = true;
        opts.onFallback?.(tokenizer.source, error);
      }
    }
    return estimateTextTokens(text);
  };

  return {
    countText,
    countMessage: (message, countOpts) => countText(messageTemplateText(message), countOpts),
    async countTools(tools, countOpts) {
      return (
        (tools.length ? await countText(toolsTemplateText(tools), countOpts) : 0) +
        (await countText(GENERATION_PROMPT_TEXT, countOpts))
      );
    },
    get source() {
      return source;
    },
  };
}
