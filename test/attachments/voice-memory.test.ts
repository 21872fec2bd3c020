/**
 * The worker's memory stays flat while 50 voice notes are transcribed at once: the real preparer
 * (download through a FileSource, OGG check, multipart upload by the openai SDK) against the fake
 * speech server, twice; after the first round warms everything up, the second round of 50 (2 MB of
 * audio) leaves the heap where it was. A note's bytes live only as long as its transcription.
 */
import { runInNewContext } from "node:vm";
import { setFlagsFromString } from "node:v8";
import { describe, expect, it } from "vitest";
import { createAttachmentPreparer } from "../../src/attachments/prepare-attachments.js";
import { createTranscriber } from "../../src/voice/transcriber.js";
import type { InboundMessage } from "../../src/contracts/inbound-message.js";
import { startFakeSpeech } from "../fakes/speech-server.js";
import { voiceNote } from "../support/voice-notes.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

const heapAfterGc = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

const message = (i: number): InboundMessage => ({
  platform: "telegram",
  conversationKey: `tg:${i}`,
  chatId: String(i),
  messageId: String(i),
  chatType: "private",
  author: { id: "1", displayName: "Alice" },
  text: "",
  receivedAt: 0,
  attachments: [{ ref: `note-${i}`, name: `voice-${i}.ogg`, contentType: "audio/ogg", durationSeconds: 20 }],
});

describe("voice notes and memory", () => {
  it("50 notes transcribed at once, twice: the heap does not grow with them", async () => {
    const fake = await startFakeSpeech({ defaultText: "twenty seconds of talk", decode: false });
    try {
      const note = await voiceNote({ seconds: 20, frequency: 250 });
      const preparer = createAttachmentPreparer({
        sources: { telegram: { download: async () => new Uint8Array(note) } },
        visionFor: async () => false,
        maxFileBytes: 10 * 1024 * 1024,
        maxImages: 4,
        audio: {
          maxSeconds: 300,
          transcriber: createTranscriber({ baseURL: fake.baseURL, model: "whisper-1", timeoutMs: 110_000 }),
        },
      });
      const round = async (from: number) => {
        const prepared = await Promise.all(Array.from({ length: 50 }, (_, i) => preparer.prepare(message(from + i))));
        return prepared.filter((p) => p.forHistory.endsWith("twenty seconds of talk")).length;
      };
      expect(await round(0)).toBe(50);
      const before = heapAfterGc();
      expect(await round(50)).toBe(50);
      const grown = heapAfterGc() - before;
      expect(fake.transcriptions.filter((t) => t.status === 200)).toHaveLength(100);
      // 50 notes are ~2 MB of audio (plus their multipart copies); none of it may stay behind.
      expect(50 * note.length).toBeGreaterThan(1.5 * 1024 * 1024);
      expect(grown).toBeLessThan(1024 * 1024);
    } finally {
      await fake.close();
    }
  }, 120_000);
});
