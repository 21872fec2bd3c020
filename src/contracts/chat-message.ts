/**
 * The messages we keep in history and send to the model: the OpenAI chat
 * format, narrowed to what this bot produces. Reasoning is never stored.
 */
export interface ToolCallRecord {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

export type ChatMessage =
  | { role: "system"; content: string }
  /** `name` is the speaker in shared conversations; the content already carries "Alice: …" for the model. */
  | { role: "user"; content: string; name?: string }
  | { role: "assistant"; content: string; tool_calls?: ToolCallRecord[] }
  | { role: "tool"; tool_call_id: string; content: string };
