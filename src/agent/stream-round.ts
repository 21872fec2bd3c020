/**
 * One streamed `chat.completions` request: yields reasoning/text deltas as they
 * arrive and returns the round's outcome. Server faults leave as ModelError; a
 * user abort is an outcome (`aborted: true`), not an error.
 */
import type OpenAI from "openai";
import type { ChatCompletionChunk, ChatCompletionCreateParamsStreaming } from "openai/resources/chat/completions";
import { ModelError, toModelError } from "./model-error.js";
import { createStreamAccumulator, type RoundOutcome, type StreamDelta } from "./stream-accumulator.js";

/** Options of one round. */
export interface StreamRoundOptions {
  signal?: AbortSignal;
  /**
   * Longest silence allowed between chunks. The SDK's timeout stops at the
   * response headers; a server that stalls mid-stream would otherwise hang the job.
   */
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
  // Ends the request's combined signal with the round: Node keeps a signal made by AbortSignal.any alive
  // as long as its sources live (the job's signal) unless it aborts, and the SDK's listener on it holds
  // the request; one such leak per round adds up in a long-lived worker.
  const ended = new AbortController();
  const signal = AbortSignal.any([...(opts.signal ? [opts.signal] : []), idle.signal, ended.signal]);
  try {
    return yield* roundWith(client, body, opts, signal, idle);
  } finally {
    ended.abort();
  }
}

async function* roundWith(
  client: OpenAI,
  body: ChatCompletionCreateParamsStreaming & Record<string, unknown>,
  opts: StreamRoundOptions,
  signal: AbortSignal,
  idle: AbortController,
): AsyncGenerator<StreamDelta, StreamRoundResult, undefined> {
  const accumulator = createStreamAccumulator({
    ...(opts.startInReasoning !== undefined ? { startInReasoning: opts.startInReasoning } : {}),
    ...(opts.makeId ? { makeId: opts.makeId } : {}),
  });
  const userAborted = (): boolean => opts.signal?.aborted === true;
  const finish = (aborted: boolean): StreamRoundResult => {
    const { outcome } = accumulator.end();
    return { ...outcome, aborted };
  };

  let stream: AsyncIterable<ChatCompletionChunk>;
  try {
    // The SDK builds the request, turns a non-2xx answer into its APIError and parses the SSE chunks (its Stream);
    // the small-model repairs work on its deltas (stream-accumulator.ts).
    stream = await client.chat.completions.create(body, { signal });
  } catch (error) {
    if (userAborted()) return finish(true);
    throw toModelError(error);
  }

  // One timer per silence, not per chunk: a chunk only notes the time, and the timer, when it
  // fires, aborts if the wait began idleTimeoutMs ago or sleeps for what is left of it.
  const idleMs = opts.idleTimeoutMs;
  let waitingSince = -1; // -1 while the consumer holds a delta: its time is not the server's silence
  let timer: ReturnType<typeof setTimeout> | undefined;
  const check = (): void => {
    timer = undefined;
    if (waitingSince < 0) return;
    const left = waitingSince + idleMs - performance.now();
    if (left <= 0) idle.abort();
    else timer = setTimeout(check, left);
  };
  const wait = (): void => {
    waitingSince = performance.now();
    timer ??= setTimeout(check, idleMs);
  };
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
    if (userAborted()) return finish(true);
    if (idle.signal.aborted) throw idleTimeout(opts.idleTimeoutMs, error);
    throw toModelError(error);
  } finally {
    clearTimeout(timer);
  }
  // The chunks end quietly when the request is aborted: find out who did it.
  if (userAborted()) return finish(true);
  if (idle.signal.aborted) throw idleTimeout(opts.idleTimeoutMs);
  const { deltas, outcome } = accumulator.end();
  for (const delta of deltas) yield delta;
  return { ...outcome, aborted: false };
}

function idleTimeout(ms: number, cause?: unknown): ModelError {
  return new ModelError(
    "timeout",
    `The model server sent nothing for ${ms} ms mid-answer.`,
    cause === undefined ? {} : { cause },
  );
}
