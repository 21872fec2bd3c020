/**
 * A read that rides along in someone else's pipeline: the key's owner queues its command and decodes the reply
 * (the worker reads settings in the same round trip as history, each store keeping its own keys).
 */
import type { ChainableCommander } from "ioredis";

/** One command queued into a pipeline, and how its reply becomes a value. */
export interface PipelinedRead<T> {
  /** Queues exactly one command. */
  queue(pipeline: ChainableCommander): void;
  /** Decodes that command's reply (ioredis gives `[error, reply]` per command). */
  decode(reply: unknown): T;
}

/** The reply of one command of an executed pipeline; throws the command's error. */
export function pipelineReply(results: [Error | null, unknown][] | null, index: number): unknown {
  if (!results) throw new Error("Redis pipeline returned nothing");
  const entry = results[index];
  if (!entry) throw new Error(`Redis pipeline has no reply #${index}`);
  if (entry[0]) throw entry[0];
  return entry[1];
}
