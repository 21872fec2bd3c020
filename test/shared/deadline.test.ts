/**
 * withDeadline under forced garbage collection (issue 36, item 5). `AbortSignal.timeout` is held
 * weakly: combined with a job's signal through `AbortSignal.any` and referenced nowhere else, it is
 * collected and its deadline never fires, so a body served at a trickle holds the call for as long
 * as the server likes. The first case shows that failure on this Node; the second, that a deadline
 * from withDeadline fires on time under the same collections.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withDeadline } from "../../src/shared/deadline.js";
import { createServerTokenizer } from "../../src/tokens/server-tokenizer.js";
import { createVisionCapability } from "../../src/agent/vision-capability.js";
import { createModelChoices } from "../../src/settings/model-choices.js";
import { resolveContextWindow } from "../../src/tokens/context-window.js";

// What --expose-gc gives, for this file only.
setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

let server: Server;
let url: string;
beforeAll(async () => {
  // A body of 100 KB sent one byte every 50 ms.
  server = createServer((_req, res) => {
    res.writeHead(200, { "content-length": "100000" });
    const drip = setInterval(() => res.write("x"), 50);
    res.on("close", () => clearInterval(drip));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** How `work` ends within `waitMs` while collections are forced every 10 ms: its error's name, or "still running". */
async function underCollections(
  work: () => Promise<unknown>,
  waitMs: number,
): Promise<{ outcome: string; ms: number }> {
  const collector = setInterval(gc, 10);
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    const outcome = await Promise.race([
      work().then(
        () => "completed",
        (error: Error) => error.name,
      ),
      new Promise<string>((resolve) => {
        timer = setTimeout(() => resolve("still running"), waitMs);
      }),
    ]);
    return { outcome, ms: performance.now() - started };
  } finally {
    clearTimeout(timer);
    clearInterval(collector);
  }
}

describe("withDeadline", () => {
  it("AbortSignal.timeout combined with a job's signal is collected and never fires (why the helper exists)", async () => {
    const job = new AbortController();
    const { outcome } = await underCollections(async () => {
      const res = await fetch(url, { signal: AbortSignal.any([job.signal, AbortSignal.timeout(300)]) });
      await res.arrayBuffer();
    }, 3_000);
    expect(outcome).toBe("still running");
    job.abort(); // ends that request
  });

  it("fires on time under the same collections, for the whole call including the body", async () => {
    const job = new AbortController();
    const { outcome, ms } = await underCollections(
      () =>
        withDeadline(
          300,
          async (signal) => {
            const res = await fetch(url, { signal });
            await res.arrayBuffer();
          },
          job.signal,
        ),
      3_000,
    );
    expect(outcome).toBe("TimeoutError");
    expect(ms).toBeLessThan(1_500);
  });

  it("passes the job's own reason on when the job is cancelled first, and answers what the call answered", async () => {
    const job = new AbortController();
    const reason = new Error("stopped by /stop");
    const call = withDeadline(
      60_000,
      (signal) =>
        new Promise((_resolve, reject) =>
          signal.addEventListener("abort", () => reject(signal.reason), { once: true }),
        ),
      job.signal,
    );
    job.abort(reason);
    await expect(call).rejects.toBe(reason);
    expect(await withDeadline(60_000, async () => "done")).toBe("done");
  });

  it("every model-server probe gives up on a trickled answer on time under collections", async () => {
    const job = new AbortController();
    const root = url.replace(/\/$/, "");
    const probes: [string, () => Promise<unknown>][] = [
      ["server tokenizer", () => createServerTokenizer({ serverRoot: root, timeoutMs: 300 }).count("hi", job.signal)],
      [
        "vision probe",
        () =>
          createVisionCapability({
            mode: "auto",
            baseURL: `${root}/v1`,
            modelServer: "llama.cpp",
            timeoutMs: 300,
          }).supports("m"),
      ],
      [
        "model choices",
        () => createModelChoices({ defaultModel: "m", baseUrl: `${root}/v1`, apiKey: "k", timeoutMs: 300 }).list(),
      ],
      ["context window", () => resolveContextWindow({ serverRoot: root, timeoutMs: 300 })],
    ];
    for (const [name, probe] of probes) {
      const { outcome, ms } = await underCollections(probe, 3_000);
      expect({ name, ended: outcome !== "still running" }).toEqual({ name, ended: true });
      expect(ms).toBeLessThan(1_500);
    }
  });
});
