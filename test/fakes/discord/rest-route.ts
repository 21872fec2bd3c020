/**
 * One REST route of the fake: its method, path pattern, the route name requests are recorded
 * under, whether it needs the bot token, the rate-limit bucket it counts against, and its handler.
 */
import type { BucketRule } from "./rate-buckets.js";
import type { HttpAnswer } from "./http-answer.js";
import type { UploadedFile } from "./multipart.js";

/** What a handler gets from the transport. */
export interface RouteContext {
  method: string;
  path: string;
  params: string[];
  query: URLSearchParams;
  /** The JSON body when it is an object. */
  body: Record<string, unknown> | undefined;
  /** The JSON body as sent (arrays included). */
  json: unknown;
  /** Files of a multipart request (`files[n]`), in order; empty for JSON. */
  files: UploadedFile[];
}

/** A REST route; the first whose method and pattern match a request handles it. */
export interface Route {
  method: string;
  pattern: RegExp;
  route: string;
  auth: boolean;
  bucket?: (params: string[]) => [BucketRule, string] | undefined;
  handle(ctx: RouteContext): HttpAnswer;
}

/** The buckets the message routes count against. */
export interface MessageBucketRules {
  /** Message writes (POST + PATCH) per channel. */
  write: BucketRule;
  typing: BucketRule;
  /** Any other route: its own generous bucket. */
  fallback(route: string): BucketRule;
}

/** Discord's message buckets (writes: 5 per 5 s per channel unless the test says otherwise). */
export const messageBucketRules = (
  messageWriteLimit: { limit: number; windowMs: number } | undefined,
): MessageBucketRules => ({
  write: {
    hash: "80c17d2f203122d936070c88c8d10f33",
    limit: messageWriteLimit?.limit ?? 5,
    windowMs: messageWriteLimit?.windowMs ?? 5000,
  },
  typing: { hash: "a1b2c3d4e5f60718293a4b5c6d7e8f90", limit: 5, windowMs: 5000 },
  fallback: (route: string): BucketRule => ({
    hash: Buffer.from(route).toString("hex").slice(0, 32),
    limit: 50,
    windowMs: 1000,
  }),
});

/** A route's bucket keyed by its channel (the first path parameter). */
export const channelBucket =
  (rule: BucketRule) =>
  (params: string[]): [BucketRule, string] => [rule, params[0] ?? ""];
