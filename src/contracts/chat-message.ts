/**
 * The messages we keep in history and send to the model: the OpenAI chat
 * format, narrowed to what this bot produces. Reasoning is never stored.
 */
export interface ToolCallRecord {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/** A picture prepared for the model (scaled, re-encoded); only ever in a request, never in history. */
export interface ChatImage {
  name: string;
  mediaType: "image/jpeg" | "image/png";
  base64: string;
}

export type ChatMessage =
  | { role: "system"; content: string }
  /** `name` is the speaker in shared conversations; the content already carries "Alice: …" for the model. */
  /** `images` go to the model beside `content`; history keeps only the `[image: name]` markers in `content`. */
  | { role: "user"; content: string; name?: string; images?: ChatImage[] }
  | { role: "assistant"; content: string; tool_calls?: ToolCallRecord[] }
  | { role: "tool"; tool_call_id: string; content: string };
