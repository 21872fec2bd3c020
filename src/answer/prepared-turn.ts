/**
 * The user's turn with its attachments prepared: what the model is sent (with inlined files and images), what the
 * history keeps (never image bytes or whole files), and the notices shown above the answer.
 */
import type { ChatMessage } from "../contracts/chat-message.js";
import type { InboundMessage } from "../contracts/inbound-message.js";
import type { AttachmentPreparer } from "../attachments/prepare-attachments.js";
import { toUserMessage } from "./user-message.js";

/** One turn's user message in both forms. */
export interface PreparedTurn {
  request: ChatMessage;
  stored: ChatMessage;
  notices: string[];
  /** False when there is nothing to ask the model (a voice note alone that could not be heard): the notices are the reply. */
  answerable: boolean;
  /** Both forms again with the reply quote sized for whether the history still has the quoted message. */
  withQuote(remembered: boolean): { request: ChatMessage; stored: ChatMessage };
}

/** Downloads and prepares the message's attachments (none: the plain user message). */
export async function prepareTurn(
  message: InboundMessage,
  preparer: AttachmentPreparer | undefined,
  signal?: AbortSignal,
): Promise<PreparedTurn> {
  const prepared = preparer && message.attachments?.length ? await preparer.prepare(message, signal) : undefined;
  const withQuote = (remembered?: boolean) => {
    const quote = remembered === undefined ? {} : { remembered };
    const request = toUserMessage(message, { attachmentText: prepared?.forModel, ...quote });
    return {
      request: request.role === "user" && prepared?.images.length ? { ...request, images: prepared.images } : request,
      stored: toUserMessage(message, { attachmentText: prepared?.forHistory, ...quote }),
    };
  };
  return { ...withQuote(), notices: prepared?.notices ?? [], answerable: prepared?.answerable ?? true, withQuote };
}
