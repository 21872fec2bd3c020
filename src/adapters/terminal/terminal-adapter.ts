/**
 * The terminal chat: each line typed is a message in one private conversation,
 * sent through the same queue and worker as Discord and Telegram.
 */
import { createInterface } from "node:readline";
import type { BotGateway } from "../../contracts/bot-gateway.js";
import type { InboundMessage } from "../../contracts/inbound-message.js";
import type { TerminalScreen } from "./terminal-reply-port.js";
import { toolListingText } from "../../contracts/tool-listing.js";

const HELP = "Commands: /reset clears the conversation, /stop cancels the answer being written, /tools lists the tools, /quit leaves.";

/** Options of the terminal adapter. */
export interface TerminalAdapterOptions {
  gateway: BotGateway;
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
  const say = (text: string) => opts.screen.out.write(text + "\n");
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
        say("🧹 Conversation cleared.");
        return true;
      case "/stop":
        say((await opts.gateway.stop(conversationKey)) ? "⏹ Stopped." : "Nothing to stop.");
        return true;
      case "/tools":
        say(toolListingText(await opts.gateway.listTools?.()));
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
