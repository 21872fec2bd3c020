/**
 * The chunks of a streamed `chat.completions` answer. When http-transport.ts made the Response,
 * they are read straight off its Node stream; otherwise (an injected fetch) through the SDK's own
 * Stream. Both give the same chunks and the same errors, because the lean reader repeats what the
 * SDK's Stream (openai/core/streaming) does:
 * - lines end at LF, CR or CRLF, anywhere in the bytes (a chunk may cut a line, or a UTF-8
 *   character, at any byte); each line is decoded on its own, a leading BOM dropped;
 * - `:` lines are comments; `field: value` loses one space; several `data:` lines join with LF;
 *   a blank line ends an event if it had an `event` or any `data`; an unfinished last event is dropped;
 * - data starting `[DONE]` ends the answer (the rest of the body is still read, then the socket is reused);
 * - other data is JSON (a SyntaxError otherwise); JSON carrying a truthy `error` throws the APIError
 *   the SDK throws (status undefined, whatever the `event:` said); `thread.*` events come as `{ event, data }`;
 * - an abort ends the chunks quietly; a broken body throws fetch's `TypeError: terminated`.
 */
import type OpenAI from "openai";
import { APIError } from "openai";
import { Stream } from "openai/streaming";
import type { ChatCompletionChunk } from "openai/resources/chat/completions";
import type { Readable } from "node:stream";
import { bodyError, isAbortError, nodeBodyOf } from "../shared/http-transport.js";

/** Chunks waiting for the consumer before the socket is paused. */
const HIGH_WATER = 64;

/** The chunks of a streamed answer, however the Response was fetched. */
export function chatChunks(client: OpenAI, response: Response): AsyncIterableIterator<ChatCompletionChunk> {
  const body = nodeBodyOf(response);
  if (body) return readSseChunks(body, response.headers);
  // Stopping early cancels the body through the SDK's own iterator; the controller has nothing more to stop.
  return Stream.fromSSEResponse<ChatCompletionChunk>(response, new AbortController(), client)[
    Symbol.asyncIterator
  ]() as AsyncIterableIterator<ChatCompletionChunk>;
}

interface Waiter {
  resolve(result: IteratorResult<ChatCompletionChunk, undefined>): void;
  reject(error: unknown): void;
}

/** Reads SSE chunks off a Node stream (the lean path); `headers` go into a mid-stream APIError. */
export function readSseChunks(source: Readable, headers: Headers): AsyncIterableIterator<ChatCompletionChunk> {
  const queue: ChatCompletionChunk[] = [];
  let head = 0;
  let failure: { error: unknown } | undefined;
  let ended = false;
  let paused = false;
  let waiter: Waiter | undefined;
  const events = createSseEvents(headers, (chunk) => queue.push(chunk));

  const settle = (): void => {
    if (!waiter) return;
    const w = waiter;
    if (head < queue.length) {
      waiter = undefined;
      w.resolve({ value: take(), done: false });
    } else if (failure) {
      waiter = undefined;
      w.reject(failure.error);
      failure = undefined;
    } else if (ended) {
      waiter = undefined;
      w.resolve({ value: undefined, done: true });
    }
  };
  const take = (): ChatCompletionChunk => {
    const chunk = queue[head] as ChatCompletionChunk;
    queue[head++] = undefined as never;
    if (head === queue.length) {
      queue.length = 0;
      head = 0;
      if (paused && !ended) {
        paused = false;
        source.resume();
      }
    }
    return chunk;
  };
  const stop = (): void => {
    ended = true;
    source.off("data", onData).off("end", onEnd).off("error", onError).off("close", onClose);
    // The reader already said how the body ended; an error reported after that has no one left to tell.
    source.on("error", ignore);
  };
  const fail = (error: unknown): void => {
    if (ended) return;
    failure = { error };
    stop();
    source.destroy();
    settle();
  };
  const onData = (bytes: Buffer): void => {
    try {
      events.push(bytes);
    } catch (error) {
      fail(error);
      return;
    }
    if (queue.length - head >= HIGH_WATER && !paused) {
      paused = true;
      source.pause();
    }
    settle();
  };
  const onEnd = (): void => {
    try {
      events.end();
    } catch (error) {
      fail(error);
      return;
    }
    stop();
    settle();
  };
  const onError = (error: unknown): void => {
    if (isAbortError(error)) {
      // Like a web stream errored by an abort: what was buffered is dropped, the chunks end quietly.
      queue.length = 0;
      head = 0;
      stop();
      settle();
      return;
    }
    fail(bodyError(error));
  };
  const onClose = (): void => {
    if (!ended) fail(bodyError(new Error("other side closed")));
  };
  source.on("data", onData).on("end", onEnd).on("error", onError).on("close", onClose);

  const iterator: AsyncIterableIterator<ChatCompletionChunk> = {
    next() {
      // An abort destroys the body at once but reports it a tick later: hand out nothing after it.
      const errored = source.errored;
      if (errored && !ended) onError(errored);
      if (head < queue.length) return Promise.resolve({ value: take(), done: false });
      return new Promise((resolve, reject) => {
        waiter = { resolve, reject };
        settle();
      });
    },
    return() {
      // Stopping before the end drops the connection, as the SDK's Stream aborts its request.
      if (!ended) {
        stop();
        source.destroy();
      }
      queue.length = 0;
      head = 0;
      failure = undefined;
      return Promise.resolve({ value: undefined, done: true });
    },
    [Symbol.asyncIterator]() {
      return iterator;
    },
  };
  return iterator;
}

function ignore(): void {}

/** The SSE decoder: bytes in, chunks out through `emit`; throws what the SDK's Stream throws. */
export interface SseEvents {
  push(bytes: Buffer): void;
  /** The body ended: the unfinished last line is read, an unfinished event dropped. */
  end(): void;
}

/** Creates the decoder of one body. */
export function createSseEvents(headers: Headers, emit: (chunk: ChatCompletionChunk) => void): SseEvents {
  let pending: Buffer | undefined;
  // The last piece ended with CR: an LF starting the next one belongs to it.
  let afterCR = false;
  let eventName: string | null = null;
  let data = "";
  let dataLines = 0;
  let done = false;

  function dispatch(): void {
    const name = eventName;
    const text = data;
    eventName = null;
    data = "";
    dataLines = 0;
    if (done) return;
    if (text.startsWith("[DONE]")) {
      done = true;
      return;
    }
    const parsed: unknown = JSON.parse(text);
    if (name === null || !name.startsWith("thread.")) {
      const error: unknown = (parsed as { error?: unknown } | null)?.error;
      if (error) throw new APIError(undefined, error as object, undefined, headers);
      emit(parsed as ChatCompletionChunk);
    } else {
      emit({ event: name, data: parsed } as unknown as ChatCompletionChunk);
    }
  }

  function line(text: string): void {
    // The SDK decodes each line with a fresh TextDecoder, which drops a leading BOM.
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    if (text === "") {
      if (eventName || dataLines > 0) dispatch();
      return;
    }
    if (text.charCodeAt(0) === 58 /* : */) return;
    const colon = text.indexOf(":");
    const field = colon === -1 ? text : text.slice(0, colon);
    let value = colon === -1 ? "" : text.slice(colon + 1);
    if (value.charCodeAt(0) === 32) value = value.slice(1);
    if (field === "data") {
      data = dataLines === 0 ? value : `${data}\n${value}`;
      dataLines++;
    } else if (field === "event") {
      eventName = value;
    }
  }

  /** Splits decoded text that ends with a line break into lines. */
  function lines(text: string): void {
    let start = 0;
    if (afterCR) {
      afterCR = false;
      if (text.charCodeAt(0) === 10) start = 1;
    }
    const length = text.length;
    if (text.indexOf("\r", start) === -1) {
      // LF only, as llama.cpp, vLLM and Ollama send it.
      while (start < length) {
        const end = text.indexOf("\n", start);
        line(text.slice(start, end));
        start = end + 1;
      }
      return;
    }
    while (start < length) {
      let end = start;
      for (let c = text.charCodeAt(end); c !== 10 && c !== 13; c = text.charCodeAt(++end));
      line(text.slice(start, end));
      if (text.charCodeAt(end) === 13) {
        if (end + 1 === length) afterCR = true;
        else if (text.charCodeAt(end + 1) === 10) end++;
      }
      start = end + 1;
    }
  }

  return {
    push(chunk) {
      const bytes = pending ? Buffer.concat([pending, chunk]) : chunk;
      pending = undefined;
      // LF and CR never occur inside a UTF-8 sequence: the text up to the last one decodes whole.
      let last = bytes.length - 1;
      while (last >= 0 && bytes[last] !== 10 && bytes[last] !== 13) last--;
      if (last < bytes.length - 1) pending = bytes.subarray(last + 1);
      if (last >= 0) lines(bytes.toString("utf8", 0, last + 1));
    },
    end() {
      const rest = pending;
      pending = undefined;
      if (rest) lines(`${rest.toString("utf8")}\n`);
    },
  };
}
