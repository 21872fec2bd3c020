import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import type { ProbeReply, ProbeRequest } from "./probe-protocol.js";

const PROBE = fileURLToPath(new URL("./process-probe.js", import.meta.url));

/** Starts an idle node process with the probe preloaded, asks it one thing, and stops it. */
async function askProbe(nodeArgs: string[], request: ProbeRequest): Promise<ProbeReply> {
  const child = fork("-e", ["setInterval(() => {}, 1000)"], {
    execArgv: [...nodeArgs, "--import", PROBE],
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  try {
    return await new Promise<ProbeReply>((resolve, reject) => {
      child.once("message", (reply) => resolve(reply as ProbeReply));
      child.once("exit", (code) => reject(new Error(`the probed process exited with ${String(code)}`)));
      child.send(request);
    });
  } finally {
    child.kill();
  }
}

describe("the process probe", () => {
  it("collects garbage when the process runs with --expose-gc and reports the heap after it", async () => {
    const reply = await askProbe(["--expose-gc"], { id: 7, type: "gc" });
    expect(reply.id).toBe(7);
    expect(reply.gcRan).toBe(true);
    expect(reply.heapUsedBytes).toBeGreaterThan(0);
    expect(reply.heapTotalBytes).toBeGreaterThanOrEqual(reply.heapUsedBytes ?? Infinity);
    expect(reply.rssBytes).toBeGreaterThan(reply.heapUsedBytes ?? Infinity);
    expect(reply.maxRssBytes).toBeGreaterThanOrEqual(reply.rssBytes);
  });

  it("says so when it could not collect, and answers a plain sample without heap figures", async () => {
    expect((await askProbe([], { id: 1, type: "gc" })).gcRan).toBe(false);
    const sample = await askProbe([], { id: 2, type: "sample" });
    expect(sample.cpuMicros).toBeGreaterThan(0);
    expect(sample.gcRan).toBeUndefined();
  });
});
