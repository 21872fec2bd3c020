/**
 * `npm run chat` in a real pseudo-terminal: tmux runs the program (through tsx, like run-cli.ts)
 * in a detached window of a fixed size, keys are typed into it, and the screen is read back as
 * the terminal shows it (`capture-pane`), so redraw bugs show up as they would to a person.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { devNull, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));

/** A chat running in tmux. */
export interface TmuxChat {
  /** Everything the terminal shows and scrolled past, wrapped rows joined back into lines, trailing blanks trimmed. */
  lines(): string[];
  /** Types text and presses Enter. */
  type(line: string): void;
  /** Presses keys by tmux name (`C-c`, `C-d`). */
  keys(...names: string[]): void;
  /** Resizes the window, as dragging the terminal's edge does. */
  resize(columns: number): void;
  /** Whether the program has exited. */
  exited(): boolean;
  close(): void;
}

const quote = (value: string) => `'${value.replace(/'/g, `'\\''`)}'`;

/** Starts `main.ts chat` (or another role: `args`) in a `columns`×`rows` terminal with only PATH, HOME and `env`. */
export function startTmuxChat(
  env: Record<string, string>,
  size = { columns: 80, rows: 30 },
  args: string[] = ["chat"],
): TmuxChat {
  const dir = mkdtempSync(join(tmpdir(), "tmux-chat-"));
  const socket = join(dir, "socket");
  const conf = join(dir, "tmux.conf");
  // Keep the screen of an exited program, and all of its scrollback.
  writeFileSync(conf, "set -g history-limit 20000\nset -g remain-on-exit on\n");
  const tmux = (...args: string[]) => execFileSync("tmux", ["-S", socket, "-f", conf, ...args], { encoding: "utf8" });
  const vars = {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "",
    ENV_FILE: devNull,
    LANG: "C.UTF-8",
    ...env,
  };
  const command = [
    "env",
    "-i",
    ...Object.entries(vars).map(([k, v]) => quote(`${k}=${v}`)),
    quote(process.execPath),
    "--import",
    "tsx",
    "src/main.ts",
    ...args.map(quote),
  ].join(" ");
  tmux("new-session", "-d", "-s", "chat", "-c", root, "-x", String(size.columns), "-y", String(size.rows), command);
  return {
    lines: () =>
      tmux("capture-pane", "-p", "-J", "-t", "chat", "-S", "-", "-E", "-")
        .split("\n")
        .map((l) => l.trimEnd())
        .filter((l, i, all) => l !== "" || all.slice(i).some((r) => r.trimEnd() !== "")),
    type: (line) => {
      tmux("send-keys", "-t", "chat", "-l", line);
      tmux("send-keys", "-t", "chat", "Enter");
    },
    keys: (...names) => void tmux("send-keys", "-t", "chat", ...names),
    resize: (columns) => void tmux("resize-window", "-t", "chat", "-x", String(columns)),
    exited: () => tmux("display-message", "-p", "-t", "chat", "#{pane_dead}").trim() === "1",
    close: () => {
      try {
        tmux("kill-server");
      } catch {
        // already gone
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
