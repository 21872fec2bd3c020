import { describe, expect, it } from "vitest";
import { OggError, readOggAudio } from "../../src/voice/ogg-audio.js";
import { voiceNote } from "../support/voice-notes.js";

describe("readOggAudio", () => {
  it("reads the codec and the duration of a real OGG/Opus voice note from its last granule position", async () => {
    const info = readOggAudio(await voiceNote({ seconds: 2.5 }));
    expect(info.codec).toBe("opus");
    expect(info.durationSeconds).toBeCloseTo(2.5, 1);
    expect(info.pages).toBeGreaterThan(2);
  });

  it("a note of 20 minutes says so before anything decodes it", async () => {
    expect(readOggAudio(await voiceNote({ seconds: 1200 })).durationSeconds).toBeCloseTo(1200, 0);
  }, 60_000);

  it("refuses a flipped byte (page checksum), a cut file and bytes that are no OGG", async () => {
    const note = await voiceNote();
    const flipped = Buffer.from(note);
    const middle = Math.floor(note.length / 2);
    flipped[middle] = (flipped[middle] ?? 0) ^ 0xff;
    expect(() => readOggAudio(flipped)).toThrow(new OggError("OGG page checksum mismatch"));
    expect(() => readOggAudio(note.subarray(0, note.length - 10))).toThrow(/truncated/);
    expect(() => readOggAudio(Buffer.from("hello, this is text"))).toThrow(/not an OGG file/);
  });
});
