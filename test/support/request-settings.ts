/** What a chat-completions request carried that a conversation's settings decide. */
import { expect } from "vitest";
import type { RecordedRequest } from "../fakes/openai-server.js";

/** The model, the thinking switch (llama.cpp dialect), the system prompt and the offered tools' names (sorted). */
export function settingsCarriedBy(request: RecordedRequest | undefined): {
  model?: string;
  thinking?: boolean;
  system: string;
  tools: string[];
} {
  expect(request, "a model request").toBeDefined();
  const body = request!.body;
  return {
    ...(body.model !== undefined ? { model: body.model } : {}),
    ...((body.chat_template_kwargs as { enable_thinking?: boolean } | undefined)?.enable_thinking !== undefined
      ? { thinking: (body.chat_template_kwargs as { enable_thinking: boolean }).enable_thinking }
      : {}),
    system: String(body.messages?.[0]?.content ?? ""),
    tools: (body.tools ?? []).map((t) => t.function.name).sort(),
  };
}
