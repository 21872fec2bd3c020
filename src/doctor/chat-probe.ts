/**
 * One small streamed chat request, read raw (not through the SDK) so the report can say exactly what the
 * server sent: its error text, whether the body was SSE at all, structured tool calls vs `<tool_call>` text.
 */
import { timeoutSignal } from "../shared/deadline.js";

/** What a probe request gave back. */
export type ChatProbeResult =
  | { kind: "http-error"; status: number; message: string }
  | { kind: "network-error"; message: string }
  | {
      kind: "stream";
      /** `data:` events that parsed as chat chunks. */
      chunks: number;
      sawDone: boolean;
      contentType: string;
      content: string;
      reasoning: string;
      toolCalls: string[];
      /** An `{"error": …}` event inside a 200 stream (llama.cpp does that). */
      streamError?: string;
    };

/** Where and how to send the probe. */
export interface ChatProbeTarget {
  baseUrl: string;
  apiKey: string;
  timeoutMs: number;
  fetch?: typeof fetch;
}

/** The most a probe reads: a small model's few tokens are far below this. */
const MAX_BODY_BYTES = 1_000_000;

/** Sends `body` (forced to stream) to {baseUrl}/chat/completions and summarises the answer. */
export async function probeChat(target: ChatProbeTarget, body: Record<string, unknown>): Promise<ChatProbeResult> {
  const doFetch = target.fetch ?? fetch;
  let res: Response;
  let text: string;
  try {
    res = await doFetch(`${target.baseUrl.replace(/\/+$/, "")}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${target.apiKey}` },
      body: JSON.stringify({ ...body, stream: true }),
      signal: timeoutSignal(target.timeoutMs),
    });
    text = (await res.text()).slice(0, MAX_BODY_BYTES);
  } catch (error) {
    return { kind: "network-error", message: describeFetchError(error) };
  }
  if (!res.ok) return { kind: "http-error", status: res.status, message: errorMessageOf(text) };
  return summariseStream(text, res.headers.get("content-type") ?? "");
}

/** The reason behind a fetch failure ("fetch failed" alone says nothing). */
export function describeFetchError(error: unknown): string {
  const e = error as Error & { cause?: { code?: string; message?: string } };
  if (e.name === "TimeoutError") return "no answer in time";
  return e.cause?.code ?? e.cause?.message ?? e.message;
}

/** The `error.message` of an OpenAI-style error body, else the body's start. */
export function errorMessageOf(text: string): string {
  try {
    const parsed = JSON.parse(text) as { error?: { message?: string } | string; message?: string };
    if (typeof parsed.error === "string") return parsed.error;
    if (parsed.error?.message) return parsed.error.message;
    if (parsed.message) return parsed.message;
  } catch {
    // not JSON: show the text itself
  }
  return text.trim().slice(0, 200) || "(empty body)";
}

/** Reads the `data:` events of an SSE body into content, reasoning and the names of the tool calls. */
function summariseStream(text: string, contentType: string): ChatProbeResult {
  const out: Extract<ChatProbeResult, { kind: "stream" }> = {
    kind: "stream",
    chunks: 0,
    sawDone: false,
    contentType,
    content: "",
    reasoning: "",
    toolCalls: [],
  };
  const calls = new Map<number, string>();
  for (const line of text.split(/\r?\n/)) {
    if (!line.startsWith("data:")) continue;
    const data = line.slice(5).trim();
    if (data === "[DONE]") {
      out.sawDone = true;
      continue;
    }
    let chunk: {
      error?: { message?: string };
      choices?: { delta?: Record<string, any> }[];
    };
    try {
      chunk = JSON.parse(data);
    } catch {
      continue;
    }
    if (chunk.error) {
      out.streamError = chunk.error.message ?? "error event";
      continue;
    }
    out.chunks++;
    for (const choice of chunk.choices ?? []) {
      const delta = choice.delta ?? {};
      if (typeof delta.content === "string") out.content += delta.content;
      if (typeof delta.reasoning_content === "string") out.reasoning += delta.reasoning_content;
      if (typeof delta.reasoning === "string") out.reasoning += delta.reasoning;
      for (const call of (delta.tool_calls ?? []) as { index?: number; function?: { name?: string } }[]) {
        const index = call.index ?? 0;
        calls.set(index, (calls.get(index) ?? "") + (call.function?.name ?? ""));
      }
    }
  }
  out.toolCalls = [...calls.entries()].sort(([a], [b]) => a - b).map(([, name]) => name);
  // Reasoning a server leaves inside the text (`--reasoning-format none`, or no reasoning parser).
  const think = /<think>([\s\S]*?)(<\/think>|$)/.exec(out.content);
  if (think) {
    out.reasoning += think[1] ?? "";
    out.content = out.content.replace(think[0], "");
  }
  return out;
}
