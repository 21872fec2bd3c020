/** A tokenizer as the budget sees it: text in, number of tokens out. */
export interface TextTokenizer {
  /** Which tokenizer this is (logs, metrics, tests). */
  readonly source: "server" | "qwen3" | "estimate";
  /** Tokens of `text`, special tokens such as `<|im_start|>` counted as one each. */
  count(text: string, signal?: AbortSignal): Promise<number>;
  /** False while it is still loading (a hurried count then skips it instead of waiting); absent: always ready. */
  isReady?(): boolean;
  /** Starts loading; resolves whether it is usable. */
  warm?(): Promise<boolean>;
}
