/** The terminal chat: each line typed is a message in one private conversation, through the same queue and worker. */
import { createInterface } from "node:readline";
import type { BotGateway } from "../../contracts/bot-gateway.js";
import type { InboundMessage } from "../../contracts/inbound-message.js";
import { inputEchoed, showStatus, type TerminalScreen } from "./terminal-reply-port.js";
import { isSettingsCommand, type SettingsPort } from "../../contracts/settings-port.js";

/** `/help`: one command per line, so it reads at any width. */
const HELP = [
  "Commands:",
  "  /reset                          forget this conversation",
  "  /compact                        fold older messages into a summary",
  "  /stop (or Ctrl-C)               stop the answer being written",
  "  /quit (or Ctrl-D, Ctrl-C twice) leave",
  "Settings:",
  "  /settings                       this conversation's settings",
  "  /model [name]                   list the models, or switch",
  "  /think on|off                   thinking",
  "  /reasoning off|collapsed|full   how reasoning is shown",
  "  /persona <text>|reset           a persona for the system prompt",
  "  /tools [on|off <tool>]          the tools, or switch one",
].join("\n");

const QUIT = Symbol("quit");

/** Options of the terminal adapter. */
export interface TerminalAdapterOptions {
  gateway: BotGateway;
  /** The settings commands; the terminal is a private chat, so its user may change them. */
  settings?: SettingsPort;
  input: NodeJS.ReadableStream;
  screen: TerminalScreen;
  /** Identifies this conversation in Redis (history survives restarts). */
  session: string;
  userName: string;
  maxInputChars: number;
  now?: () => number;
}

/** The running terminal chat. */
export interface TerminalChat {
  /** Resolves when the user is done and every line typed was offered. */
  done: Promise<void>;
  /** Stops reading input (the chat ends once the lines already typed were offered). */
  close(): void;
  /** Ctrl-C: stops the answer being written; with nothing to stop, or pressed again before a new line, leaves. */
  interrupt(): Promise<"stopped" | "leaving">;
}

/** Reads lines until end of input or /quit; resolves when the user is done and every queued line was offered. */
export function runTerminalAdapter(opts: TerminalAdapterOptions): TerminalChat {
  const now = opts.now ?? Date.now;
  const rl = createInterface({ input: opts.input, terminal: false });
  const conversationKey = `term:${opts.session}`;
  const say = (text: string) => opts.screen.out.write(`${text}\n`);
  let sequence = 0;
  let pending = Promise.resolve();
  // Set by a Ctrl-C that stopped an answer; a new line typed clears it.
  let stoppedByInterrupt = false;

  /** Handles one typed line: resolves the text to show, if any, or `quit`. */
  const handle = async (line: string): Promise<string | typeof QUIT | undefined> => {
    const text = line.trim();
    if (text === "") return undefined;
    stoppedByInterrupt = false;
    switch (text) {
      case "/quit":
      case "/exit":
        return QUIT;
      case "/help":
      case "/start":
        return HELP;
      case "/reset":
        await opts.gateway.reset(conversationKey);
        return "🧹 Conversation cleared. Its settings stay (/settings reset restores the defaults).";
      case "/stop":
        return (await opts.gateway.stop(conversationKey)) ? "⏹ Stopped." : "Nothing to stop.";
      case "/compact":
        return opts.gateway.compact ? await opts.gateway.compact(conversationKey, { shared: false }) : HELP;
    }
    const settingsCommand = /^\/([a-z]+)(?:\s+([\s\S]*))?$/i.exec(text);
    const name = settingsCommand?.[1]?.toLowerCase() ?? "";
    if (opts.settings && isSettingsCommand(name)) {
      const asker = {
        platform: "terminal" as const,
        conversationKey,
        isPrivate: true,
        userId: opts.session,
        isChatAdmin: async () => true,
      };
      const { text: view } = await opts.settings.run(asker, name, settingsCommand?.[2] ?? "");
      // The settings views offer buttons; the terminal has none, only the typed command.
      return view.replace(/Choose with the buttons or /g, "Choose with ");
    }
    if (text.startsWith("/")) return `Unknown command.\n${HELP}`;
    if (text.length > opts.maxInputChars)
      return `That message is too long (${text.length} characters; the limit is ${opts.maxInputChars}).`;
    const message: InboundMessage = {
      platform: "terminal",
      conversationKey,
      chatId: opts.session,
      messageId: `${now()}-${sequence++}`,
      chatType: "private",
      author: { id: opts.session, displayName: opts.userName },
      text,
      receivedAt: now(),
    };
    const result = await opts.gateway.enqueue(message);
    return result.status === "refused" && result.reason !== undefined ? `⚠️ ${result.reason}` : undefined;
  };

  const done = new Promise<void>((resolve) => {
    let quitting = false;
    rl.on("line", (line) => {
      if (opts.screen.out.isTTY) inputEchoed(opts.screen);
      if (quitting) return;
      // Lines are offered in order even when typed faster than Redis answers.
      pending = pending
        .then(() => handle(line))
        .then((shown) => {
          if (shown !== QUIT) {
            if (shown !== undefined) say(shown);
            return;
          }
          quitting = true;
          rl.close();
        })
        .catch((error: unknown) => say(`⚠️ ${(error as Error).message}`));
    });
    rl.on("close", () => void pending.then(resolve));
  });
  const interrupt = async () => {
    const leaving = stoppedByInterrupt;
    // Stop first either way: leaving must not wait for an answer nobody will read.
    const stopped = await opts.gateway.stop(conversationKey).catch(() => false);
    if (stopped && !leaving) {
      stoppedByInterrupt = true;
      // On a TTY as the status line under the answer being redrawn, so the redraw stays in place.
      const line = "⏹ Stopped. (Ctrl-C again leaves.)";
      if (opts.screen.out.isTTY) showStatus(opts.screen, line, { keep: true });
      else say(line);
      return "stopped" as const;
    }
    rl.close();
    return "leaving" as const;
  };
  return { done, close: () => rl.close(), interrupt };
}
