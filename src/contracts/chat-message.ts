/** History and model messages: the OpenAI chat format narrowed to what this bot produces (no reasoning). */
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
  /** `name`: the speaker in shared chats (content already says "Alice: …"); `images`: request only, never history. */
  | { role: "user"; content: string; name?: string; images?: ChatImage[] }
  | { role: "assistant"; content: string; tool_calls?: ToolCallRecord[] }
  | { role: "tool"; tool_call_id: string; content: string };
