import { describe, expect, it } from "vitest";
import { OggError } from "../../src/voice/ogg-audio.js";
import { opusPacketSeconds, opusWaveform, waveformSamplesFor } from "../../src/voice/ogg-waveform.js";
import { voiceNote } from "../support/voice-notes.js";

describe("opusWaveform", () => {
  it("draws a second of tone loud and the second of silence after it quiet, one sample per 100 ms", async () => {
    const wave = opusWaveform(await voiceNote({ seconds: 1, silenceAfter: 1 }));
    expect(wave).toHaveLength(20);
    const tone = [...wave.subarray(1, 9)];
    const silence = [...wave.subarray(12, 20)];
    expect(Math.max(...wave)).toBe(255);
    expect(Math.min(...tone)).toBeGreaterThan(100);
    expect(Math.max(...silence)).toBeLessThan(10);
  });

  it("a long recording gets at most 256 samples; a given count is honoured", async () => {
    const note = await voiceNote({ seconds: 40 });
    expect(opusWaveform(note)).toHaveLength(256);
    expect(opusWaveform(note, 32)).toHaveLength(32);
    expect(waveformSamplesFor(0.04)).toBe(1);
    expect(waveformSamplesFor(3.26)).toBe(33);
  });

  it("reads each packet's length from its TOC byte: frame size by configuration, frames by code", () => {
    expect(opusPacketSeconds(Uint8Array.of((31 << 3) | 0))).toBe(0.02); // CELT 20 ms, one frame
    expect(opusPacketSeconds(Uint8Array.of((3 << 3) | 1))).toBe(0.12); // SILK 60 ms, two frames
    expect(opusPacketSeconds(Uint8Array.of((16 << 3) | 3, 4))).toBe(0.01); // CELT 2.5 ms, four frames
    expect(opusPacketSeconds(new Uint8Array(0))).toBe(0);
  });

  it("refuses what is not whole OGG/Opus", async () => {
    expect(() => opusWaveform(Buffer.from("not audio"))).toThrow(OggError);
    const note = await voiceNote();
    expect(() => opusWaveform(note.subarray(0, note.length - 7))).toThrow(/truncated/);
  });
});
