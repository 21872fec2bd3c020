/**
 * When an answer is spoken (the chat's /voice mode) and what reaches the port: the bounded words, the
 * file's own duration and its waveform, and a caption when only the start is spoken. A failure is logged,
 * never thrown: the text answer stands.
 */
import { describe, expect, it } from "vitest";
import {
  SPOKEN_PART_CAPTION,
  speakAnswer,
  wantsSpokenAnswer,
  type SpokenAnswers,
} from "../../src/answer/spoken-answer.js";
import type { ReplyPort, SpokenAudio } from "../../src/contracts/reply-port.js";
import { readOggAudio } from "../../src/voice/ogg-audio.js";
import { opusWaveform } from "../../src/voice/ogg-waveform.js";
import { inboundMessage } from "../support/inbound-message.js";
import { voiceNote } from "../support/voice-notes.js";

const typed = inboundMessage({ text: "hello" });
const spoken = inboundMessage({
  text: "",
  attachments: [{ ref: "f1", name: "voice-1.ogg", contentType: "audio/ogg", durationSeconds: 2 }],
});

/** A port that only records the voice messages it is given. */
function recordingPort(): ReplyPort & { voices: SpokenAudio[] } {
  const voices: SpokenAudio[] = [];
  return {
    voices,
    limits: { maxLength: 4096, minEditIntervalMs: 0 },
    format: (markdown) => ({ text: markdown }),
    send: async () => "1",
    edit: async () => undefined,
    async sendVoice(voice) {
      voices.push(voice);
      return String(voices.length);
    },
  };
}

describe("spoken answers", () => {
  it("auto speaks the answer to a voice note only; on speaks every answer; off none", () => {
    expect([undefined, "auto", "on", "off"].map((m) => wantsSpokenAnswer(m as never, typed))).toEqual([
      false,
      false,
      true,
      false,
    ]);
    expect([undefined, "auto", "on", "off"].map((m) => wantsSpokenAnswer(m as never, spoken))).toEqual([
      true,
      true,
      true,
      false,
    ]);
  });

  it("sends the synthesised file with its own duration and waveform; a long answer in part, with the caption", async () => {
    const audio = await voiceNote({ seconds: 1.5 });
    const said: string[] = [];
    const deps: SpokenAnswers = {
      synthesiser: {
        async speak(text) {
          said.push(text);
          return audio;
        },
      },
      logger: { warn: () => undefined },
    };
    const port = recordingPort();
    await speakAnswer(deps, port, "**Short** answer.");
    await speakAnswer(deps, port, "One sentence here. ".repeat(60));
    expect(said[0]).toBe("Short answer.");
    expect(said[1]?.length).toBeLessThanOrEqual(600);
    expect(said[1]?.endsWith("here.")).toBe(true);
    expect(port.voices[0]).toEqual({
      bytes: audio,
      durationSeconds: readOggAudio(audio).durationSeconds,
      waveform: opusWaveform(audio),
    });
    expect(port.voices[1]?.caption).toBe(SPOKEN_PART_CAPTION);
  });

  it("a server that sends no OGG/Opus, or a port that refuses, is logged and nothing is thrown", async () => {
    const warnings: string[] = [];
    const deps: SpokenAnswers = {
      synthesiser: { speak: async () => new TextEncoder().encode("not audio") },
      logger: { warn: (_o, msg) => warnings.push(String(msg)) },
    };
    const port = recordingPort();
    expect(await speakAnswer(deps, port, "Hello.")).toBeUndefined();
    const refusing = {
      ...recordingPort(),
      sendVoice: async () => Promise.reject(new Error("403 Missing Permissions")),
    };
    const audio = await voiceNote();
    expect(await speakAnswer({ ...deps, synthesiser: { speak: async () => audio } }, refusing, "Hello.")).toBe(
      undefined,
    );
    expect(warnings).toEqual([
      "spoken answer failed; the text answer stands",
      "spoken answer failed; the text answer stands",
    ]);
    expect(port.voices).toEqual([]);
  });
});
