/** A user message as the OpenAI API takes it: text, or text then one `image_url` data URL per picture. */
import type { ChatCompletionContentPart, ChatCompletionUserMessageParam } from "openai/resources/chat/completions";
import type { ChatMessage } from "../contracts/chat-message.js";

/** The request form of a user message. */
export function toUserRequestMessage(message: Extract<ChatMessage, { role: "user" }>): ChatCompletionUserMessageParam {
  if (!message.images?.length) return { role: "user", content: message.content };
  const parts: ChatCompletionContentPart[] = [{ type: "text", text: message.content }];
  for (const image of message.images) {
    parts.push({ type: "image_url", image_url: { url: `data:${image.mediaType};base64,${image.base64}` } });
  }
  return { role: "user", content: parts };
}
