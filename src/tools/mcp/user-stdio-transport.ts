/**
 * A stdio MCP transport whose child runs as another account, which the SDK's StdioClientTransport cannot do.
 * Same framing (the SDK's ReadBuffer and serializeMessage) and close (stdin end, SIGTERM, SIGKILL). The bot
 * must be allowed to switch users (root, or CAP_SETUID and CAP_SETGID).
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { PassThrough } from "node:stream";
import { getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/** The account a child runs as. */
interface ChildAccount {
  uid: number;
  gid: number;
}

/** `1001`, `1001:1001` or a name known to this system (looked up with `id`); throws naming the user otherwise. */
export function resolveAccount(user: string): ChildAccount {
  const numeric = /^(\d+)(?::(\d+))?$/.exec(user);
  if (numeric) return { uid: Number(numeric[1]), gid: Number(numeric[2] ?? numeric[1]) };
  try {
    const id = (flag: string) => Number(execFileSync("id", [flag, user], { encoding: "utf8" }).trim());
    return { uid: id("-u"), gid: id("-g") };
  } catch {
    throw new Error(`user "${user}" does not exist on this system`);
  }
}

/** What the child needs. */
interface UserStdioOptions {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  account: ChildAccount;
}

/** The transport; `stderr` is piped from the start, like the SDK's with `stderr: "pipe"`. */
export class UserStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  readonly stderr = new PassThrough();
  private child: ChildProcess | undefined;
  private readonly buffer = new ReadBuffer();

  constructor(private readonly options: UserStdioOptions) {}

  /** The child's pid once started. */
  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  start(): Promise<void> {
    if (this.child) throw new Error("UserStdioTransport already started");
    const { command, args, env, cwd, account } = this.options;
    return new Promise((resolve, reject) => {
      const child = spawn(command, args, {
        // The SDK's short list (HOME, LOGNAME, SHELL, TERM, USER, PATH) as it would pass it, then the entry's own.
        env: { ...getDefaultEnvironment(), ...env },
        stdio: ["pipe", "pipe", "pipe"],
        shell: false,
        cwd,
        uid: account.uid,
        gid: account.gid,
      });
      this.child = child;
      child.on("error", (error) => {
        reject(error);
        this.onerror?.(error);
      });
      child.on("spawn", () => resolve());
      child.on("close", () => {
        this.child = undefined;
        this.onclose?.();
      });
      child.stdin?.on("error", (error) => this.onerror?.(error));
      child.stdout?.on("data", (chunk: Buffer) => {
        this.buffer.append(chunk);
        for (;;) {
          let message: JSONRPCMessage | null;
          try {
            message = this.buffer.readMessage();
          } catch (error) {
            this.onerror?.(error as Error);
            continue;
          }
          if (message === null) break;
          this.onmessage?.(message);
        }
      });
      child.stderr?.pipe(this.stderr);
    });
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const stdin = this.child?.stdin;
    if (!stdin) throw new Error("Not connected");
    if (!stdin.write(serializeMessage(message))) await new Promise((resolve) => stdin.once("drain", resolve));
  }

  async close(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (child) {
      const closed = new Promise<void>((resolve) => child.once("close", () => resolve()));
      const grace = () => new Promise<void>((resolve) => setTimeout(resolve, 2000).unref());
      child.stdin?.end();
      await Promise.race([closed, grace()]);
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        await Promise.race([closed, grace()]);
      }
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    }
    this.buffer.clear();
  }
}
