import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { codeOwner, inclusiveByOurFile, summariseProfile } from "./cpu-profile-summary.js";

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

const frame = (id: number, functionName: string, url: string, children: number[] = []) => ({
  id,
  callFrame: { functionName, url },
  children,
});

describe("the worker profile summary", () => {
  it("names our files, packages and V8's categories", () => {
    expect(codeOwner("file:///srv/bot/dist/reply/reply-stream.js", "render", "/srv/bot/dist")).toBe(
      "src/reply/reply-stream.ts",
    );
    expect(codeOwner("file:///srv/bot/node_modules/@grammyjs/runner/out/a.js", "f", "/srv/bot/dist")).toBe(
      "@grammyjs/runner",
    );
    expect(codeOwner("", "(garbage collector)", "/srv/bot/dist")).toBe("(garbage collector)");
    expect(codeOwner("", "writev", "/srv/bot/dist")).toBe("(native) writev");
  });

  it("splits busy time by code, without idle time and without the benchmark's own probe", () => {
    dir = mkdtempSync(join(tmpdir(), "bench-profile-"));
    const root = "/srv/bot/dist";
    const profile = {
      nodes: [
        frame(1, "(root)", "", [2, 3, 5, 6]),
        frame(2, "(idle)", ""),
        frame(3, "streamReply", `file://${root}/reply/reply-stream.js`, [4]),
        frame(4, "format", `file://${root}/bots/telegram/telegram-html.js`),
        frame(5, "onMessage", "file:///srv/bot/bench/process-probe.js", [7]),
        frame(6, "parse", "file:///srv/bot/node_modules/openai/streaming.mjs"),
        frame(7, "dispatch", ""),
      ],
      samples: [2, 3, 4, 4, 6, 7, 7],
      timeDeltas: [9000, 1000, 1000, 1000, 1000, 5000, 5000],
    };
    const path = join(dir, "p.cpuprofile");
    writeFileSync(path, JSON.stringify(profile));
    expect(summariseProfile(path, root)).toEqual([
      { owner: "src/bots/telegram/telegram-html.ts", ms: 2, share: 0.5 },
      { owner: "src/reply/reply-stream.ts", ms: 1, share: 0.25 },
      { owner: "openai", ms: 1, share: 0.25 },
    ]);
    expect(inclusiveByOurFile(path, root)[0]).toEqual({ owner: "src/reply/reply-stream.ts", ms: 3, share: 0.75 });
  });
});
