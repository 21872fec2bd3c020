/**
 * The process-level guards every role installs: a stray rejection is logged (scrubbed, as name,
 * message and stack only) and the process goes on; an uncaught exception is logged and hands over
 * to the role's shutdown. A grammY BotError carries the update's context, bot token included.
 */
import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { logSink } from "../support/log-sink.js";
import { createLogger } from "../../src/observability/logger.js";
import { errorSummary, installProcessGuards } from "../../src/app/process-guards.js";

const TOKEN = "7000000001:AAGuardTestTokenValue_12345";

/** An error shaped like grammY's BotError: its context holds the API client and so the token. */
function botError(): Error {
  return Object.assign(new Error("READONLY You can't write against a read only replica."), {
    name: "BotError",
    ctx: { api: { token: TOKEN } },
  });
}

describe("process guards", () => {
  it("log a stray rejection without the error's properties and keep the process alive", () => {
    const out = logSink();
    const proc = new EventEmitter() as unknown as NodeJS.Process;
    let exited = false;
    (proc as unknown as { exit: () => void }).exit = () => void (exited = true);
    const remove = installProcessGuards(createLogger({ level: "info", secrets: [], destination: out.stream }), {
      process: proc,
    });
    (proc as unknown as EventEmitter).emit("unhandledRejection", botError());
    remove();
    expect(exited).toBe(false);
    expect(out.text()).toContain("unhandled promise rejection");
    expect(out.text()).toContain("READONLY");
    // Not even a logger without the token configured would write it: the context is never logged.
    expect(out.text()).not.toContain(TOKEN);
  });

  it("hand an uncaught exception to the role's shutdown", () => {
    const out = logSink();
    const proc = new EventEmitter() as unknown as NodeJS.Process;
    const seen: unknown[] = [];
    const remove = installProcessGuards(createLogger({ level: "info", secrets: [TOKEN], destination: out.stream }), {
      process: proc,
      onUncaughtException: (error) => seen.push(error),
    });
    const error = botError();
    (proc as unknown as EventEmitter).emit("uncaughtException", error);
    remove();
    expect(seen).toEqual([error]);
    expect(out.text()).toContain("uncaught exception");
    expect(out.text()).not.toContain(TOKEN);
  });

  it("summarise any thrown value as type and message", () => {
    expect(errorSummary("plain")).toEqual({ type: "string", message: "plain" });
    expect(Object.keys(errorSummary(botError()))).toEqual(["type", "message", "stack"]);
  });
});
