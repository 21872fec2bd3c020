/**
 * Running a Bot API method by name: method names are case-insensitive, as on the real server,
 * an unknown one is a 404 "method not found", and an ApiFailure thrown by a handler becomes
 * that error's answer.
 */
import type { ServerResponse } from "node:http";
import { ApiFailure } from "./method-outcomes.js";

/** One method's handler: its result, an ApiFailure, or CLIENT_GONE; `res` is there for methods that wait (long polls). */
export type MethodHandler = (p: Record<string, unknown>, res?: ServerResponse) => unknown;

/** A group of handlers keyed by lower-case method name. */
export type MethodTable = Record<string, MethodHandler>;

/** Runs a method by name. */
export type Dispatch = (method: string, p: Record<string, unknown>, res?: ServerResponse) => Promise<unknown>;

/** The dispatcher over every group of handlers. */
export function createDispatch(...tables: MethodTable[]): Dispatch {
  // A Map, so a method called "constructor" is not found on Object.prototype.
  const handlers = new Map<string, MethodHandler>(tables.flatMap((t) => Object.entries(t)));
  return async (method, p, res) => {
    try {
      const handler = handlers.get(method.toLowerCase());
      if (!handler) return new ApiFailure(404, "Not Found: method not found");
      return await handler(p, res);
    } catch (err) {
      if (err instanceof ApiFailure) return err;
      throw err;
    }
  };
}
