/**
 * The text Qwen3's chat template (ChatML) makes of messages and tool definitions, so a tokenizer counts exactly what
 * the model is sent. Other templates frame messages a little differently; their content is still counted exactly.
 */
import type { ChatMessage } from "../contracts/chat-message.js";

/** The template's text of one message (consecutive tool results are counted as separate user turns: a few tokens generous). */
export function messageTemplateText(message: ChatMessage): string {
  switch (message.role) {
    case "system":
    case "user":
      return `<|im_start|>${message.role}\n${message.content}<|im_end|>\n`;
    case "assistant": {
      let text = `<|im_start|>assistant\n${message.content}`;
      (message.tool_calls ?? []).forEach((call, i) => {
        if (i > 0 || message.content) text += "\n";
        text += `<tool_call>\n{"name": "${call.function.name}", "arguments": ${call.function.arguments}}\n</tool_call>`;
      });
      return `${text}<|im_end|>\n`;
    }
    case "tool":
      return `<|im_start|>user\n<tool_response>\n${message.content}\n</tool_response><|im_end|>\n`;
  }
}

/** What the assistant turn the server opens for the answer costs (`<|im_start|>assistant\n`). */
export const GENERATION_PROMPT_TEXT = "<|im_start|>assistant\n";

/** JSON as Jinja's `tojson` writes it (Python's separators: `", "` and `": "`). */
function templateJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(templateJson).join(", ")}]`;
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}: ${templateJson(v)}`).join(", ")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** The `# Tools` section the template adds to the system turn (the caller counts the system prompt itself). */
export function toolsTemplateText(tools: readonly unknown[]): string {
  if (tools.length === 0) return "";
  return (
    "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n" +
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>" +
    tools.map((tool) => `\n${templateJson(tool)}`).join("") +
    "\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n" +
    '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
  );
}
