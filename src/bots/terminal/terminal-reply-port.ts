/**
 * The terminal as a platform: on a TTY the reply is redrawn in place as it streams (ANSI cursor moves);
 * piped, only each message's final text is printed, so `npm run chat` also works in scripts.
 */
import type { RenderedText, ReplyPort, ReplyPortFactory, SendOptions } from "../../contracts/reply-port.js";
import { plainText, screenRows } from "./terminal-text.js";

/** Where the terminal writes, and whether it can redraw. */
export interface TerminalOutput {
  write(text: string): void;
  isTTY: boolean;
  /** The terminal's width now (read at every redraw: the window may have been resized). */
  readonly columns?: number;
}

/** Shared screen state: only the block printed last can be redrawn in place. */
export interface TerminalScreen {
  out: TerminalOutput;
  lastBlock?: { messageId: string; text: string; rows: number };
  nextId: number;
  /** Called after a final message is printed (the prompt is redrawn). */
  onFinal?: () => void;
  /** Piped output: the final text printed per message, so a retry's (or a give-up's) repeat is not printed twice. */
  printedFinals?: Map<string, string>;
  /** A status line kept below the last block (a retry notice), redrawn in place; gone once a final message lands. */
  status?: { text: string; rows: number; keep?: boolean };
}

/** Shows (or replaces, in place) the one status line under the conversation; TTY only. `keep`: it stays under the final answer too. */
export function showStatus(screen: TerminalScreen, text: string, opts: { keep?: boolean } = {}): void {
  if (screen.status) screen.out.write(`\x1b[${screen.status.rows}A\r\x1b[J`);
  screen.out.write(`${text}\n`);
  screen.status = { text, rows: screenRows(text, columnsOf(screen)), ...(opts.keep ? { keep: true } : {}) };
}

/** The user's typed line is echoed below the last block: the rest of the answer starts a new block under it. */
export function inputEchoed(screen: TerminalScreen): void {
  screen.lastBlock = undefined;
  screen.status = undefined;
}

/** After a resize: the rows the last block and the status line take now (the terminal rewrapped them). */
export function followResize(screen: TerminalScreen): void {
  const columns = columnsOf(screen);
  if (screen.lastBlock) screen.lastBlock.rows = screenRows(screen.lastBlock.text, columns);
  if (screen.status) screen.status.rows = screenRows(screen.status.text, columns);
}

/** Creates the terminal's reply port factory; every job prints to the same screen. */
export function createTerminalReplyPortFactory(screen: TerminalScreen): ReplyPortFactory {
  return () => createTerminalReplyPort(screen);
}

/** The terminal's width now (the window may have been resized). */
const columnsOf = (screen: TerminalScreen) => Math.max(20, screen.out.columns ?? 80);

function createTerminalReplyPort(screen: TerminalScreen): ReplyPort {
  const texts = new Map<string, string>();

  const print = (messageId: string, body: string, final: boolean) => {
    const text = `🤖 ${body}`;
    if (!screen.out.isTTY) {
      // A retry finalises the same message again with the same text: print it once.
      screen.printedFinals ??= new Map();
      if (final && screen.printedFinals.get(messageId) !== text) {
        screen.printedFinals.set(messageId, text);
        screen.out.write(`${text}\n`);
        screen.onFinal?.();
      }
      return;
    }
    // The status line sits under the last block: lift it off, redraw, and put it back unless the answer is final.
    const statusRows = screen.status?.rows ?? 0;
    const up = (screen.lastBlock?.messageId === messageId ? screen.lastBlock.rows : 0) + statusRows;
    if (up > 0) screen.out.write(`\x1b[${up}A\r\x1b[J`);
    screen.out.write(`${text}\n`);
    screen.lastBlock = { messageId, text, rows: screenRows(text, columnsOf(screen)) };
    if (screen.status && (!final || screen.status.keep)) screen.out.write(`${screen.status.text}\n`);
    // Once the answer is final nothing redraws it: a kept status line stays as plain text.
    if (final) screen.status = undefined;
    if (final) screen.onFinal?.();
  };

  return {
    limits: { maxLength: 100_000, minEditIntervalMs: 50 },
    format(markdown: string): RenderedText {
      // A terminal renders no Markdown: show what it means, not its escapes.
      return { text: plainText(markdown) };
    },
    async send(content: RenderedText, opts: SendOptions): Promise<string> {
      const id = `t${screen.nextId++}`;
      texts.set(id, content.text);
      print(id, content.text, opts.final === true);
      return id;
    },
    async edit(messageId: string, content: RenderedText, opts: SendOptions): Promise<void> {
      if (texts.get(messageId) === content.text) {
        if (!opts.final) return;
        // The final text is already on the screen (no status line to lift off): a redraw would only
        // risk the rows below it, such as a line typed meanwhile.
        if (screen.out.isTTY && !screen.status) {
          screen.onFinal?.();
          return;
        }
      }
      texts.set(messageId, content.text);
      print(messageId, content.text, opts.final === true);
    },
  };
}
