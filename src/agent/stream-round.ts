/**
 * One streamed `chat.completions` request: yields reasoning/text deltas as they arrive and returns the round's
 * outcome. Server faults leave as ModelError; a user abort is an outcome (`aborted: true`), not an error.
 */
import type OpenAI from "openai";
import type { ChatCompletionChunk, ChatCompletionCreateParamsStreaming } from "openai/resources/chat/completions";
import { ModelError, toModelError } from "./model-error.js";
import { createStreamAccumulator, type RoundOutcome, type StreamDelta } from "./stream-accumulator.js";

/** Options of one round. */
export interface StreamRoundOptions {
  signal?: AbortSignal;
  /** Longest silence between chunks: the SDK's timeout stops at the headers, and a stalled stream would hang the job. */
  idleTimeoutMs: number;
  startInReasoning?: boolean;
  makeId?: () => string;
}

/** A round's outcome, or the news that the user aborted it. */
export type StreamRoundResult = RoundOutcome & { aborted: boolean };

/** Streams one round; throws ModelError for server faults. */
export async function* streamRound(
  client: OpenAI,
  body: ChatCompletionCreateParamsStreaming & Record<string, unknown>,
  opts: StreamRoundOptions,
): AsyncGenerator<StreamDelta, StreamRoundResult, undefined> {
  const idle = new AbortController();
  // Ends the request's combined signal with the round: Node keeps a signal made by AbortSignal.any alive as long as
  // its sources live (the job's signal) unless it aborts, and the SDK's listener on it holds the request.
  const ended = new AbortController();
  const signal = AbortSignal.any([...(opts.signal ? [opts.signal] : []), idle.signal, ended.signal]);
  const accumulator = createStreamAccumulator({ startInReasoning: opts.startInReasoning, makeId: opts.makeId });
  const userAborted = (): boolean => opts.signal?.aborted === true;
  const aborted = (): StreamRoundResult => ({ ...accumulator.end().outcome, aborted: true });
  const idleTimeout = (cause?: unknown) =>
    new ModelError("timeout", `The model server sent nothing for ${opts.idleTimeoutMs} ms mid-answer.`, { cause });

  // One timer per silence, not per chunk: a chunk only notes the time, and the timer, when it fires, aborts if the
  // wait began idleTimeoutMs ago or sleeps for what is left of it.
  let waitingSince = -1; // -1 while the consumer holds a delta: its time is not the server's silence
  let timer: ReturnType<typeof setTimeout> | undefined;
  const check = (): void => {
    timer = undefined;
    if (waitingSince < 0) return;
    const left = waitingSince + opts.idleTimeoutMs - performance.now();
    if (left <= 0) idle.abort();
    else timer = setTimeout(check, left);
  };
  const wait = (): void => {
    waitingSince = performance.now();
    timer ??= setTimeout(check, opts.idleTimeoutMs);
  };
  try {
    let stream: AsyncIterable<ChatCompletionChunk>;
    try {
      // The SDK builds the request, turns a non-2xx answer into its APIError and parses the SSE chunks.
      stream = await client.chat.completions.create(body, { signal });
    } catch (error) {
      if (userAborted()) return aborted();
      throw toModelError(error);
    }
    wait();
    try {
      for await (const chunk of stream) {
        const deltas = accumulator.push(chunk);
        if (deltas.length > 0) {
          waitingSince = -1;
          for (const delta of deltas) yield delta;
        }
        wait();
      }
    } catch (error) {
      if (userAborted()) return aborted();
      if (idle.signal.aborted) throw idleTimeout(error);
      throw toModelError(error);
    } finally {
      clearTimeout(timer);
    }
    // The chunks end quietly when the request is aborted: find out who did it.
    if (userAborted()) return aborted();
    if (idle.signal.aborted) throw idleTimeout();
    const { deltas, outcome } = accumulator.end();
    for (const delta of deltas) yield delta;
    return { ...outcome, aborted: false };
  } finally {
    ended.abort();
  }
}
