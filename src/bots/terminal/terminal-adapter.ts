/**
 * The terminal chat: each line typed is a message in one private conversation,
 * sent through the same queue and worker as Discord and Telegram.
 */
import { createInterface } from "node:readline";
import type { BotGateway } from "../../contracts/bot-gateway.js";
import type { InboundMessage } from "../../contracts/inbound-message.js";
import type { TerminalScreen } from "./terminal-reply-port.js";
import { isSettingsCommand, type SettingsPort } from "../../contracts/settings-port.js";

const HELP =
  "Commands: /reset clears the conversation, /compact folds older messages into a summary, /stop cancels the answer being written, /quit leaves. " +
  "Settings: /settings, /model [name], /think on|off, /reasoning off|collapsed|full, /persona <text>|reset, /tools [on|off <tool>].";

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

/** Reads lines until end of input or /quit; resolves when the user is done and every queued line was offered. */
export function runTerminalAdapter(opts: TerminalAdapterOptions): { done: Promise<void>; close(): void } {
  const now = opts.now ?? Date.now;
  const rl = createInterface({ input: opts.input, terminal: false });
  const conversationKey = `term:${opts.session}`;
  const say = (text: string) => opts.screen.out.write(`${text}\n`);
  let sequence = 0;
  let pending = Promise.resolve();

  const handle = async (line: string): Promise<boolean> => {
    const text = line.trim();
    if (text === "") return true;
    switch (text) {
      case "/quit":
      case "/exit":
        return false;
      case "/help":
      case "/start":
        say(HELP);
        return true;
      case "/reset":
        await opts.gateway.reset(conversationKey);
        say("🧹 Conversation cleared. Its settings stay (/settings reset restores the defaults).");
        return true;
      case "/stop":
        say((await opts.gateway.stop(conversationKey)) ? "⏹ Stopped." : "Nothing to stop.");
        return true;
      case "/compact":
        say(opts.gateway.compact ? await opts.gateway.compact(conversationKey, { shared: false }) : HELP);
        return true;
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
      say((await opts.settings.run(asker, name, settingsCommand?.[2] ?? "")).text);
      return true;
    }
    if (text.startsWith("/")) {
      say(`Unknown command. ${HELP}`);
      return true;
    }
    if (text.length > opts.maxInputChars) {
      say(`That message is too long (${text.length} characters; the limit is ${opts.maxInputChars}).`);
      return true;
    }
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
    if (result.status === "refused" && result.reason !== undefined) say(`⚠️ ${result.reason}`);
    return true;
  };

  const done = new Promise<void>((resolve) => {
    let quitting = false;
    rl.on("line", (line) => {
      if (quitting) return;
      // Lines are offered in order even when typed faster than Redis answers.
      pending = pending
        .then(() => handle(line))
        .then((goOn) => {
          if (!goOn) {
            quitting = true;
            rl.close();
          }
        })
        .catch((error: unknown) => say(`⚠️ ${(error as Error).message}`));
    });
    rl.on("close", () => void pending.then(resolve));
  });
  return { done, close: () => rl.close() };
}
