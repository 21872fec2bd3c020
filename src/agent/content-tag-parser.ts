/**
 * Splits streamed `content` into answer text, reasoning and textual tool-call blocks: servers that do not parse the
 * model's markup (llama.cpp `--reasoning-format none`, LM Studio, raw vLLM) pass `<think>` and Hermes `<tool_call>`
 * through as content, with tags split across chunks anywhere (`<th` + `ink>`).
 */

/** A piece of content classified as it streams. */
export interface ContentPiece {
  kind: "text" | "reasoning";
  text: string;
}

/** What remains when the content is over. */
export interface ContentSummary {
  /** The answer text with every reasoning and tool-call part removed (untrimmed). */
  text: string;
  /** Inner text of each complete `<tool_call>…</tool_call>` block, in order. */
  toolBlocks: string[];
  /** Inner text of a `<tool_call>` that never closed (cut, or the model forgot the tag). */
  unclosedToolBlock: string | undefined;
}

/** The streaming splitter; `push` returns what can be shown now, `end` flushes the rest. */
export interface ContentTagParser {
  push(content: string): ContentPiece[];
  end(): { pieces: ContentPiece[]; summary: ContentSummary };
}

const THINK_OPEN = "<think>";
const THINK_CLOSE = "</think>";
const TOOL_OPEN = "<tool_call>";
const TOOL_CLOSE = "</tool_call>";

type Mode = "text" | "think" | "tool";

const TAGS_BY_MODE: Record<Mode, readonly string[]> = {
  text: [THINK_OPEN, THINK_CLOSE, TOOL_OPEN],
  // Qwen3.5-style templates may open a tool call inside the thinking block without closing it first.
  think: [THINK_CLOSE, TOOL_OPEN],
  tool: [TOOL_CLOSE],
};

/** Creates a parser; `startInReasoning`: the template pre-opens `<think>`, so only `</think>` appears. */
export function createContentTagParser(opts: { startInReasoning?: boolean } = {}): ContentTagParser {
  let mode: Mode = opts.startInReasoning ? "think" : "text";
  let held = ""; // text not yet classified: it may be the start of a tag
  let text = "";
  let toolBuffer = "";
  const toolBlocks: string[] = [];
  let sawThinkOpen = Boolean(opts.startInReasoning);
  // llama.cpp drops the "\n\n" after </think>; do the same so the answer does not start with blank lines.
  let trimNextText = true;

  function emit(out: ContentPiece[], kind: "text" | "reasoning", piece: string): void {
    if (piece === "") return;
    if (kind === "text") {
      if (trimNextText) {
        piece = piece.replace(/^\s+/, "");
        if (piece === "") return;
        trimNextText = false;
      }
      text += piece;
    }
    const last = out[out.length - 1];
    if (last && last.kind === kind) last.text += piece;
    else out.push({ kind, text: piece });
  }

  function route(out: ContentPiece[], piece: string): void {
    if (mode === "tool") toolBuffer += piece;
    else emit(out, mode === "think" ? "reasoning" : "text", piece);
  }

  function onTag(tag: string): void {
    switch (tag) {
      case THINK_OPEN:
        mode = "think";
        sawThinkOpen = true;
        return;
      case THINK_CLOSE:
        if (mode === "text" && !sawThinkOpen) {
          // A bare </think>: everything so far was reasoning from a pre-opened template.
          // Deltas already shown cannot be recalled, but the stored answer must not keep it.
          text = "";
        }
        mode = "text";
        sawThinkOpen = true;
        trimNextText = true;
        return;
      case TOOL_OPEN:
        mode = "tool";
        toolBuffer = "";
        return;
      case TOOL_CLOSE:
        toolBlocks.push(toolBuffer);
        toolBuffer = "";
        mode = "text";
        trimNextText = true;
        return;
    }
  }

  function drain(out: ContentPiece[]): void {
    // Bounded: each iteration consumes at least one tag or ends.
    for (;;) {
      const tags = TAGS_BY_MODE[mode];
      let at = -1;
      let found = "";
      for (const tag of tags) {
        const i = held.indexOf(tag);
        if (i !== -1 && (at === -1 || i < at)) {
          at = i;
          found = tag;
        }
      }
      if (at === -1) break;
      route(out, held.slice(0, at));
      held = held.slice(at + found.length);
      onTag(found);
    }
    const keep = partialTagSuffix(held, TAGS_BY_MODE[mode]);
    route(out, held.slice(0, held.length - keep));
    held = held.slice(held.length - keep);
  }

  return {
    push(content) {
      const out: ContentPiece[] = [];
      if (content === "") return out;
      held += content;
      drain(out);
      return out;
    },
    end() {
      const out: ContentPiece[] = [];
      // A held "<th" that never became a tag is ordinary text.
      route(out, held);
      held = "";
      const unclosed = mode === "tool" ? toolBuffer : undefined;
      return {
        pieces: out,
        summary: { text, toolBlocks: [...toolBlocks], unclosedToolBlock: unclosed },
      };
    },
  };
}

/** Length of the longest suffix of `s` that is a proper prefix of one of `tags`. */
function partialTagSuffix(s: string, tags: readonly string[]): number {
  const start = s.lastIndexOf("<");
  if (start === -1) return 0;
  const tail = s.slice(start);
  for (const tag of tags) {
    if (tail.length < tag.length && tag.startsWith(tail)) return tail.length;
  }
  return 0;
}
