/**
 * The terminal chat's logs: JSON lines would bury the conversation, so they go to a file, a retry
 * becomes one status line in place, and an error one short human line.
 */
import { closeSync, mkdirSync, openSync, writeSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { dirname, join } from "node:path";
import { Writable } from "node:stream";

/** What the sink tells the person at the terminal. */
export interface ChatLogListener {
  /** A job attempt failed and will be retried (attempt counts from 1). */
  onRetry(attempt: number, attempts: number, reason: string): void;
  /** A job's last attempt failed: the answer says the model is unavailable (reason: the error's first line). */
  onGiveUp?(reason: string): void;
  /** An error or fatal line, as one short sentence. */
  onProblem(text: string): void;
}

/** A log destination for the chat, and the file it writes. */
export interface ChatLogSink {
  destination: NodeJS.WritableStream;
  /** The log file, or undefined when none could be opened (lines are then only summarised). */
  path: string | undefined;
  close(): void;
}

/** The log file: one per user in the temp directory. */
function chatLogPath(): string {
  const user = (() => {
    try {
      return userInfo().username;
    } catch {
      return "user";
    }
  })();
  return join(tmpdir(), `local-llm-chatbot-${user.replace(/[^\w.-]/g, "_")}`, "chat.log");
}

/** The short reason of a logged error: its own message, without the causes pino appends ("…: cause: cause"). */
function reasonOf(entry: { err?: { message?: string }; msg?: string }): string {
  const first = (entry.err?.message ?? entry.msg ?? "").split("\n")[0]!;
  return first
    .split(/(?<=\.): /)[0]!
    .replace(/\.$/, "")
    .slice(0, 200);
}

/** Creates the sink; `attempts` is QUEUE_ATTEMPTS (for "retry 2 of 4"). */
export function createChatLogSink(opts: { attempts: number; listener: ChatLogListener }): ChatLogSink {
  const path = chatLogPath();
  let fd: number | undefined;
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    fd = openSync(path, "a", 0o600);
  } catch {
    fd = undefined; // an unwritable temp dir must not stop the chat
  }
  const handle = (line: string): void => {
    if (fd !== undefined) writeSync(fd, line.endsWith("\n") ? line : `${line}\n`);
    let entry: { level?: number; msg?: string; outcome?: string; attempt?: number; err?: { message?: string } };
    try {
      entry = JSON.parse(line);
    } catch {
      return;
    }
    if (entry.msg === "job outcome" && entry.outcome === "failed")
      opts.listener.onRetry(entry.attempt ?? 1, opts.attempts, reasonOf(entry));
    else if (entry.msg === "job outcome" && entry.outcome === "given_up") opts.listener.onGiveUp?.(reasonOf(entry));
    else if ((entry.level ?? 0) >= 50)
      opts.listener.onProblem(`${entry.msg ?? "error"}${entry.err?.message ? `: ${reasonOf(entry)}` : ""}`);
  };
  const destination = new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      for (const line of String(chunk).split("\n")) if (line.trim()) handle(line);
      callback();
    },
  });
  return {
    destination,
    path: fd === undefined ? undefined : path,
    close() {
      if (fd !== undefined) closeSync(fd);
      fd = undefined;
    },
  };
}
