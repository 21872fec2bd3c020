/** The bot as a real child process (`src/main.ts <role>` through tsx), for kill and restart tests. */
import { spawn, type ChildProcess } from "node:child_process";
import { devNull } from "node:os";

/** A running role process and what it printed. */
export interface RoleProcess {
  child: ChildProcess;
  output(): string;
  /** Resolves with the exit code (or signal name). */
  exited: Promise<number | string>;
  kill(signal?: NodeJS.Signals): void;
}

/** Spawns `main.ts <role>` with exactly this environment (plus PATH); resolves once it logged "started" (pino JSON at info). */
export async function spawnRole(
  role: "all" | "bots" | "worker",
  env: Record<string, string>,
  timeoutMs = 20_000,
): Promise<RoleProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts", role], {
    // ENV_FILE: a developer's ./.env (real tokens!) must not leak into a test process.
    env: { PATH: process.env.PATH ?? "", HTTP_PORT: "0", LOG_LEVEL: "info", ENV_FILE: devNull, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (out += d.toString()));
  const exited = new Promise<number | string>((resolve) =>
    child.on("exit", (code, signal) => resolve(code ?? signal ?? "unknown")),
  );
  const started = await Promise.race([
    new Promise<boolean>((resolve) => {
      const check = () => {
        if (/"msg":"started"/.test(out)) resolve(true);
      };
      child.stdout?.on("data", check);
      child.stderr?.on("data", check);
    }),
    exited.then(() => false),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), timeoutMs)),
  ]);
  if (!started) {
    child.kill("SIGKILL");
    throw new Error(`role ${role} did not start:\n${out.slice(-3000)}`);
  }
  return { child, output: () => out, exited, kill: (signal = "SIGTERM") => void child.kill(signal) };
}
