/**
 * What the fake model says in the benchmark: for every question one tool round
 * (`get_weather`), then an answer of numbered words (`w1 w2 … wN`, a paragraph
 * every 50 words) streamed at a fixed pace. Numbered words let the benchmark read
 * from any text a platform shows how far into the answer the user can see.
 */
import {
  paced,
  textAnswer,
  tokenize,
  toolCallAnswer,
  type FakeHandler,
  type RecordedRequest,
} from "../test/fakes/openai-server.js";

/** The tag every benchmark question carries, so the model tap can tell conversations apart. */
export function conversationTag(id: number): string {
  return `conv-${id}`;
}

/** Finds the conversation tag in any text (a request body, a log line). */
export function findConversationTag(text: string): number | undefined {
  let found: number | undefined;
  for (const m of text.matchAll(/conv-(\d+)/g)) found = Number(m[1]);
  return found;
}

/** The question a benchmark user asks. */
export function questionText(id: number): string {
  return `${conversationTag(id)}: how is the weather in Beijing today? Please explain in detail.`;
}

/** An answer of `words` numbered words, which the model's tokenizer cuts into exactly `words` deltas. */
export function answerText(words: number): string {
  let text = "";
  for (let k = 1; k <= words; k++) {
    const gap = k === 1 ? "" : (k - 1) % 50 === 0 ? "\n\n" : " ";
    text += `${gap}w${k}`;
  }
  return text;
}

/** Options of the benchmark's model script. */
export interface BenchModelOptions {
  /** Answer length for a conversation (by its tag). */
  answerWords(conversation: number): number;
  tokensPerSecond: number;
}

/** The fake model's handler: a weather call first, the paced answer once the tool result is in. */
export function benchModelHandler(opts: BenchModelOptions): FakeHandler {
  return (request: RecordedRequest) => {
    const messages = request.body.messages ?? [];
    const user = [...messages].reverse().find((m) => m.role === "user");
    const conversation = findConversationTag(
      typeof user?.content === "string" ? user.content : JSON.stringify(user?.content ?? ""),
    );
    if (!messages.some((m) => m.role === "tool")) {
      return paced(toolCallAnswer([{ name: "get_weather", arguments: { city: "Beijing" } }]), opts.tokensPerSecond);
    }
    const words = conversation === undefined ? 20 : opts.answerWords(conversation);
    return paced(textAnswer(answerText(words)), opts.tokensPerSecond);
  };
}

/** Deltas the fake streams for one answer (a sanity check of `answerText`). */
export function answerDeltaCount(words: number): number {
  return tokenize(answerText(words)).length;
}
