/**
 * A TCP relay in front of the fake model that notes, per conversation, when each
 * streamed delta left the model: the worker talks to the tap exactly as it would to
 * the model server (bytes pass through unchanged, no HTTP parsing in the way), and
 * the tap reads the SSE events as they go by. The fake itself has no hook for
 * "this delta was written now", and timing the relay is the next best thing: the
 * bytes reach the worker at the same moment they are noted here.
 *
 * A connection carries one request at a time (HTTP/1.1 keep-alive, no pipelining),
 * so the conversation tag found in a request's body names the response that follows.
 */
import { connect, createServer, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import type { ModelStream } from "./conversation-figures.js";
import { findConversationTag } from "./model-script.js";

/** A running tap. */
export interface ModelTap {
  /** OPENAI_BASE_URL for the worker (…/v1). */
  url: string;
  /** What streamed per conversation tag. */
  streams: Map<number, ModelStream>;
  close(): Promise<void>;
}

/** The reading half of the tap for one connection (exported for tests). */
export interface StreamReader {
  /** Bytes the client sent (a request, maybe in pieces). */
  request(chunk: Buffer): void;
  /** Bytes the model answered, noted at the time of the call. */
  response(chunk: Buffer): void;
}

const REQUEST_START = /^(?:POST|GET|PUT|DELETE|HEAD|OPTIONS|PATCH) /;
const CONTENT = /"delta":\{"content":"((?:[^"\\]|\\.)*)"/;
const WORD = /w(\d+)/;

/** Creates the SSE reader of one connection, recording into `streams`. */
export function createStreamReader(streams: Map<number, ModelStream>, now: () => number = Date.now): StreamReader {
  let conversation: number | undefined;
  let requestTail = "";
  let pending = "";

  const streamOf = (id: number): ModelStream => {
    let stream = streams.get(id);
    if (!stream) {
      stream = { tokens: 0, answerAt: [] };
      streams.set(id, stream);
    }
    return stream;
  };

  const onEvent = (event: string, at: number): void => {
    if (conversation === undefined) return;
    const data = event.indexOf("data: ");
    if (data < 0) return;
    const json = event.slice(data + 6);
    if (json.startsWith("[DONE]")) return;
    const stream = streamOf(conversation);
    const content = CONTENT.exec(json);
    if (content || json.includes('"tool_calls":[') || json.includes('"reasoning')) stream.tokens++;
    if (content) {
      const word = WORD.exec(content[1] ?? "");
      if (word) {
        const k = Number(word[1]);
        if (stream.answerAt[k] === undefined) stream.answerAt[k] = at;
      }
    }
    if (json.includes('"finish_reason":"stop"')) stream.finishAt = at;
  };

  return {
    request(chunk) {
      // latin1 keeps byte offsets and every ASCII character; the tag is ASCII.
      const text = chunk.toString("latin1");
      if (REQUEST_START.test(text)) {
        conversation = undefined;
        requestTail = "";
      }
      const found = findConversationTag(requestTail + text);
      if (found !== undefined) conversation = found;
      requestTail = text.slice(-24);
    },
    response(chunk) {
      const at = now();
      pending += chunk.toString("latin1");
      let end: number;
      while ((end = pending.indexOf("\n\n")) >= 0) {
        onEvent(pending.slice(0, end), at);
        pending = pending.slice(end + 2);
      }
    },
  };
}

/** Starts the tap on 127.0.0.1 (free port), relaying to the model at `upstreamPort`. */
export async function startModelTap(opts: { upstreamPort: number; now?: () => number }): Promise<ModelTap> {
  const streams = new Map<number, ModelStream>();
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  };
  const server = createServer((client) => {
    const upstream = connect(opts.upstreamPort, "127.0.0.1");
    track(client);
    track(upstream);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    const reader = createStreamReader(streams, opts.now);
    client.on("data", (chunk: Buffer) => {
      reader.request(chunk);
      upstream.write(chunk);
    });
    upstream.on("data", (chunk: Buffer) => {
      reader.response(chunk);
      client.write(chunk);
    });
    client.on("end", () => upstream.end());
    upstream.on("end", () => client.end());
    // Either side failing ends both: the client sees what it would see from the model server.
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    streams,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
