/** What a recorded model request carried, read the way the attachment scenarios need it. */
import type { RecordedRequest } from "../fakes/openai-server.js";

/** The last user message of a model request as OpenAI content parts (a plain string becomes one text part). */
export function lastUserParts(request: RecordedRequest | undefined): Array<Record<string, any>> {
  const content = request?.body.messages?.filter((m) => m.role === "user").at(-1)?.content;
  return Array.isArray(content) ? content : [{ type: "text", text: content }];
}
