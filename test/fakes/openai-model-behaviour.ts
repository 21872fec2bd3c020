/**
 * A handler for the fake model server that behaves like Qwen3 behind a server
 * (not a script): it calls a tool the user asks for by name, otherwise answers
 * "OK", and thinks first unless the request switched thinking off in the way
 * the server understands. For checks that probe a server (the doctor) rather
 * than replay a conversation.
 */
import { textAnswer, toolCallAnswer, type FakeChatRequestBody, type FakeHandler } from "./openai-server.js";

/** Which request field switches thinking off, as a given server reads it (the others are ignored, as real servers do). */
export type ThinkingSwitch = "chat_template_kwargs" | "enable_thinking" | "reasoning_effort" | "none";

/** Whether the request asked for thinking to be off, read the way `understands` says. */
function thinkingOff(body: FakeChatRequestBody, understands: ThinkingSwitch): boolean {
  switch (understands) {
    case "chat_template_kwargs":
      return body.chat_template_kwargs?.enable_thinking === false;
    case "enable_thinking":
      return body.enable_thinking === false;
    case "reasoning_effort":
      return body.reasoning_effort === "none";
    case "none":
      return false;
  }
}

/** A Qwen3-like model: llama.cpp's thinking switch by default. */
export function qwen3LikeModel(opts: { understands?: ThinkingSwitch } = {}): FakeHandler {
  const understands = opts.understands ?? "chat_template_kwargs";
  return (request) => {
    const body = request.body;
    const reasoning = thinkingOff(body, understands) ? undefined : "The user wants a short answer.";
    const lastUser = [...(body.messages ?? [])].reverse().find((m) => m.role === "user");
    const asked = (body.tools ?? []).find((t) => String(lastUser?.content ?? "").includes(t.function.name));
    if (asked)
      return toolCallAnswer(
        [{ name: asked.function.name, arguments: { word: "ping" } }],
        reasoning ? { reasoning } : {},
      );
    return textAnswer("OK", reasoning ? { reasoning } : {});
  };
}
