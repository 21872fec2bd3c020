/**
 * The web chat's reply port (worker side): events go into the conversation's Redis Stream for the bots role to
 * serve. `observe` carries the live view; `send`/`edit` only matter for the final text.
 */
import type { AgentEvent } from "../../contracts/agent-events.js";
import type { RenderedText, ReplyPort, ReplyPortFactory, SendOptions } from "../../contracts/reply-port.js";
import type { WebEventLog } from "./web-event-log.js";
import { webEventOf, type WebEvent } from "./web-events.js";

/** Options of the web reply ports. */
export interface WebReplyPortOptions {
  log: WebEventLog;
  /** Where a failed append goes (the answer goes on: the final text lands in history either way). */
  onError(error: unknown): void;
}

/** Builds one port per job; each keeps the order of its appends (one Redis connection, commands in order). */
export function createWebReplyPortFactory(opts: WebReplyPortOptions): ReplyPortFactory {
  return (message) => {
    const ck = message.conversationKey;
    const job = message.messageId;
    let begun = false;
    let sent = 0;
    const append = (event: WebEvent, keepAlive = false): Promise<void> =>
      opts.log.append(ck, event, { keepAlive }).then(
        () => undefined,
        (error: unknown) => opts.onError(error),
      );
    const begin = () => {
      if (begun) return;
      begun = true;
      void append({ kind: "begin", job });
    };
    const final = async (content: RenderedText, sendOpts: SendOptions) => {
      if (!sendOpts.final) return;
      begin();
      await append({ kind: "final", job, text: content.text }, true);
    };
    const port: ReplyPort = {
      // One message however long: the page scrolls. Edits matter only as the final text, so no pacing.
      limits: { maxLength: 1_000_000, minEditIntervalMs: 0 },
      format: (markdown) => ({ text: markdown }),
      async send(content, sendOpts) {
        await final(content, sendOpts);
        return `web-${job}-${sent++}`;
      },
      async edit(_messageId, content, sendOpts) {
        await final(content, sendOpts);
      },
      observe(event: AgentEvent) {
        begin();
        const webEvent = webEventOf(job, event);
        if (webEvent) void append(webEvent);
      },
    };
    return port;
  };
}
