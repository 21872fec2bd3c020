/** Runs one of the program's entry points (src/main.ts, src/ask.ts) as a real process through tsx, the way a person runs it. */
import { spawn } from "node:child_process";
import { devNull } from "node:os";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../", import.meta.url));

/** What the process printed and how it ended. */
export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Spawns `node --import tsx <script> ...args` in the repository with only PATH, HOME and `env`
 * (plus ENV_FILE pointing at nothing, so a developer's ./.env never leaks in); `input` is written
 * to stdin, which is then closed; `onStderr` sees stderr as it grows (to act on a notice). Killed after `timeoutMs`.
 */
export function runCli(
  script: string,
  args: string[],
  opts: { env?: Record<string, string>; input?: string; timeoutMs?: number; onStderr?: (soFar: string) => void } = {},
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", script, ...args], {
      cwd: root,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", ENV_FILE: devNull, ...opts.env },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
      opts.onStderr?.(stderr);
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 30_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(opts.input ?? "");
  });
}
