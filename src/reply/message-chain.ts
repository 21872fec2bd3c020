/**
 * The messages of one reply, top to bottom: one slot per message, each with its own coalescing
 * editor. A slot's id goes into the journal before anything else happens to the reply (so a retried
 * job finds it), the next message is sent only once the previous one's id is known (ids stay in
 * order), and a message's final text never lands before the final text of the message above it
 * (the reader sees the reply fill from the top). A retried job's journal already holds ids: those
 * messages are edited, new ones are sent only beyond them.
 */
import type { RenderedText, ReplyPort } from "../contracts/reply-port.js";
import type { ReplyJournal } from "../contracts/reply-journal.js";
import { createThrottledEditor, type ThrottledEditor, type ThrottledEditorOptions } from "./throttled-editor.js";

/** Equal rendered texts are never sent twice. */
export const sameRendered = (a: RenderedText, b: RenderedText): boolean =>
  a.text === b.text && a.parseMode === b.parseMode;

/** Options of a chain. */
export interface MessageChainOptions {
  port: Pick<ReplyPort, "send" | "edit">;
  journal: ReplyJournal;
  /** What every message's editor shares: the chat's pacing key, the gate, spacing, signal, pull. */
  editor: Omit<ThrottledEditorOptions<RenderedText>, "apply" | "equals">;
  /** Called after every request that made something of the reply visible. */
  onVisible?(): void;
}

/** The messages of one reply. */
export interface MessageChain {
  /** Ids of messages sent by earlier attempts of this job. */
  readonly existing: readonly string[];
  /** Every message id known so far, in order. */
  ids(): string[];
  /** Whether message `index` has been opened (by a live text or a final one). */
  has(index: number): boolean;
  /** The editor of message `index` (opened on first use). */
  editor(index: number): ThrottledEditor<RenderedText>;
  /** Resolves when the message before `index` has its final text; undefined when there is nothing to wait for. */
  previousLanded(index: number): Promise<void> | undefined;
  /** Gives message `index` its final text (after the message above it has its own); `signal` cancels that request. */
  finalise(index: number, content: RenderedText, signal?: AbortSignal): void;
  /** Waits for every final text given so far; the first failure, if any. */
  settle(): Promise<{ failed?: unknown }>;
}

interface Slot {
  id?: string;
  recorded: boolean;
  /** Settles when the slot's id is in the journal (the next message waits for it, so ids stay in order). */
  idKnown: Promise<void>;
  markIdKnown(): void;
  failIdKnown(error: unknown): void;
  editor: ThrottledEditor<RenderedText>;
  /** Settles (never rejects) once the message's final text landed or failed: the next message waits for it. */
  finalLanded?: Promise<void>;
  landed: boolean;
}

/** Creates the chain of a reply. */
export function createMessageChain(opts: MessageChainOptions): MessageChain {
  const { port, journal } = opts;
  const existing = [...journal.messageIds];
  const ids: string[] = [...existing];
  const slots: Slot[] = [];
  const finals: Promise<void>[] = [];

  /** Sends or edits message `index` (sending records its id first). */
  const apply = async (
    slot: Slot,
    index: number,
    content: RenderedText,
    final: boolean,
    signal: AbortSignal | undefined,
  ) => {
    const sendOpts = { continuation: index > 0, final, ...(signal ? { signal } : {}) };
    let fresh = false;
    if (slot.id === undefined) {
      if (index > 0) await slotAt(index - 1).idKnown;
      slot.id = await port.send(content, sendOpts);
      fresh = true;
    }
    if (!slot.recorded) {
      // Recorded before anything else happens to this reply, so a retried job finds it.
      ids[index] = slot.id;
      await journal.record([...ids]);
      slot.recorded = true;
      slot.markIdKnown();
    }
    if (!fresh) await port.edit(slot.id, content, sendOpts);
    opts.onVisible?.();
  };

  const slotAt = (index: number): Slot => {
    const known = slots[index];
    if (known) return known;
    let markKnown!: () => void;
    let failKnown!: (error: unknown) => void;
    const idKnown = new Promise<void>((resolve, reject) => {
      markKnown = resolve;
      failKnown = reject;
    });
    idKnown.catch(() => undefined); // observed through the next message's apply, not here
    const recorded = index < existing.length;
    const slot: Slot = {
      ...(recorded ? { id: existing[index] } : {}),
      recorded,
      idKnown,
      markIdKnown: markKnown,
      failIdKnown: failKnown,
      landed: false,
      editor: createThrottledEditor<RenderedText>({
        ...opts.editor,
        equals: sameRendered,
        apply: (content, { final, signal }) => apply(slot, index, content, final, signal),
      }),
    };
    if (recorded) markKnown();
    slots[index] = slot;
    return slot;
  };

  const previousLanded = (index: number): Promise<void> | undefined => {
    const prev = index > 0 ? slots[index - 1] : undefined;
    return prev && !prev.landed ? prev.finalLanded : undefined;
  };

  return {
    existing,
    ids: () => [...ids],
    has: (index) => slots[index] !== undefined,
    editor: (index) => slotAt(index).editor,
    previousLanded,
    finalise(index, content, signal) {
      const slot = slotAt(index);
      const before = previousLanded(index);
      const flush = () => slot.editor.flush(content, signal ? { signal } : {});
      const done = before ? before.then(flush) : flush();
      slot.finalLanded = done.then(
        () => undefined,
        () => undefined,
      );
      void slot.finalLanded.then(() => {
        slot.landed = true;
      });
      // A message whose final text cannot land must not leave the next one waiting for its id forever.
      done.catch((error: unknown) => slot.failIdKnown(error));
      finals.push(done);
    },
    async settle() {
      const settled = await Promise.allSettled(finals);
      const failed = settled.find((r): r is PromiseRejectedResult => r.status === "rejected");
      return failed ? { failed: failed.reason } : {};
    },
  };
}
