/**
 * Where a reply's live tail is shown while the model writes, two strategies behind one interface:
 * - messages: the tail is the last message of the chain, edited in place; a continuation's live text
 *   waits (newest wins) until the message above it has its final text;
 * - drafts (Telegram private chats): the tail is a native draft, a preview paced on its own key at
 *   the port's draft interval and kept alive while idle; the messages are sent when the answer ends.
 */
import type { RenderedText, ReplyPort } from "../contracts/reply-port.js";
import type { MessageChain } from "./message-chain.js";
import { sameRendered } from "./message-chain.js";
import { draftPacingKey } from "./rate-gate.js";
import { createThrottledEditor, type RequestSpacing, type ThrottledEditorOptions } from "./throttled-editor.js";

/** The live tail of a reply. */
export interface LiveSurface {
  /** Drafts: the answer's messages are sent only at the end (a reply that is only a placeholder sends none). */
  readonly drafts: boolean;
  /** Something visible at once: the placeholder, unless a retried job's message is already there. */
  begin(placeholder: RenderedText): void;
  /** Shows the live text of message `index`. */
  show(index: number, content: RenderedText): void;
  /** The view changed: false when no editor can pull it now (the caller renders on a timer instead). */
  invalidate(index: number): boolean;
  /** The answer is being sent as messages: stops keep-alives and lets the last live request finish. */
  end(): Promise<void>;
}

/** The live tail as the chain's last message. */
export function createMessageSurface(chain: MessageChain, opts: { onVisible(): void; ending(): boolean }): LiveSurface {
  let heldBack: { index: number; content: RenderedText } | undefined;
  return {
    drafts: false,
    begin(placeholder) {
      if (chain.existing.length === 0) chain.editor(0).update(placeholder);
      else opts.onVisible(); // a retried job: its message is already there
    },
    show(index, content) {
      const before = chain.previousLanded(index);
      if (!before) {
        chain.editor(index).update(content);
        return;
      }
      const waiting = heldBack !== undefined && heldBack.index === index;
      heldBack = { index, content };
      if (waiting) return;
      void before.then(() => {
        const held = heldBack;
        if (!held || held.index !== index || opts.ending()) return;
        heldBack = undefined;
        chain.editor(index).update(held.content);
      });
    },
    invalidate(index) {
      if (chain.previousLanded(index)) return false;
      chain.editor(index).invalidate();
      return true;
    },
    end: async () => undefined,
  };
}

/** Options of the draft surface. */
export interface DraftSurfaceOptions {
  draft: NonNullable<ReplyPort["draft"]>;
  draftId: number;
  limits: () => ReplyPort["limits"];
  /** What every editor of the reply shares (the chat's pacing key is turned into its drafts' key here). */
  editor: Omit<ThrottledEditorOptions<RenderedText>, "apply" | "equals" | "spacing" | "onApplied">;
  /** A draft is re-sent after this long without a change, before the platform drops it. */
  keepAliveMs: number;
  onVisible(): void;
}

/** The live tail as a native draft. */
export function createDraftSurface(opts: DraftSurfaceOptions): LiveSurface {
  let keepAliveTimer: ReturnType<typeof setTimeout> | undefined;
  let ended = false;
  // Drafts are previews, not messages: their own pace and budget, so the messages' slots stay for the finals.
  const spacing: RequestSpacing = {
    get minIntervalMs() {
      const limits = opts.limits();
      return limits.draftIntervalMs ?? limits.minEditIntervalMs;
    },
  };
  const armKeepAlive = () => {
    if (keepAliveTimer !== undefined) clearTimeout(keepAliveTimer);
    keepAliveTimer = undefined;
    if (ended) return; // the answer is being sent as a message: no draft may follow it
    keepAliveTimer = setTimeout(() => {
      keepAliveTimer = undefined;
      editor.refresh();
    }, opts.keepAliveMs);
  };
  const editor = createThrottledEditor<RenderedText>({
    ...opts.editor,
    chatKey: draftPacingKey(opts.editor.chatKey),
    spacing,
    equals: sameRendered,
    apply: async (content, { signal }) => {
      await opts.draft(opts.draftId, content, signal ? { signal } : {});
      opts.onVisible();
    },
    onApplied: armKeepAlive,
  });
  return {
    drafts: true,
    begin: (placeholder) => editor.update(placeholder),
    show: (_index, content) => editor.update(content),
    invalidate() {
      editor.invalidate();
      return true;
    },
    async end() {
      ended = true;
      if (keepAliveTimer !== undefined) clearTimeout(keepAliveTimer);
      keepAliveTimer = undefined;
      // A draft landing after the message would show a stale preview: let the last one finish first.
      await editor.cancel();
    },
  };
}
