/**
 * A Telegram file served at a trickle must not hold an answer past the download deadline, even with
 * garbage collection running (issue 36: `AbortSignal.timeout` is weakly held, so its 30 s deadline
 * never fired and an answer waited 123 s). A Bot API server of our own on loopback answers getFile
 * and then sends the file one byte at a time; collections are forced all along.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { Api } from "grammy";
import { afterEach, describe, expect, it } from "vitest";
import { createTelegramFileSource } from "../../../src/bots/telegram/telegram-file-source.js";

// What --expose-gc gives, for this file only.
setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

const TOKEN = "123456:trickle-token";
let server: Server | undefined;
const drips: NodeJS.Timeout[] = [];
afterEach(async () => {
  for (const drip of drips.splice(0)) clearInterval(drip);
  server?.closeAllConnections();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** getFile as the Bot API answers it, then the file at one byte per 100 ms. */
async function startTrickleBotApi(): Promise<string> {
  server = createServer((req, res) => {
    if (req.url?.startsWith(`/bot${TOKEN}/getFile`)) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          ok: true,
          result: { file_id: "f1", file_unique_id: "u1", file_size: 1000, file_path: "documents/file_1.txt" },
        }),
      );
      return;
    }
    res.writeHead(200, { "content-type": "text/plain", "content-length": "1000" });
    const drip = setInterval(() => res.write("x"), 100);
    drips.push(drip);
    res.on("close", () => clearInterval(drip));
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server!.address() as AddressInfo).port}`;
}

describe("Telegram download deadline", () => {
  it("fires while collections run: the trickled file is given up on time, with a short error", async () => {
    const apiRoot = await startTrickleBotApi();
    const source = createTelegramFileSource({
      api: new Api(TOKEN, { apiRoot }),
      token: TOKEN,
      apiRoot,
      timeoutMs: 1_000,
    });
    // The worker hands its job's signal down: the deadline is then combined with it.
    const job = new AbortController();
    const collector = setInterval(gc, 20);
    try {
      const started = performance.now();
      const failure = await source
        .download(
          { ref: "f1", name: "slow.txt", contentType: "text/plain" },
          { maxBytes: 1_000_000, signal: job.signal },
        )
        .catch((error: Error) => error);
      expect(String(failure)).toBe("AttachmentError: slow.txt could not be downloaded from Telegram");
      expect(performance.now() - started).toBeLessThan(4_000);
    } finally {
      clearInterval(collector);
    }
  });
});
