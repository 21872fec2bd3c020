import { describe, expect, it } from "vitest";
import { checkSpeechServer, checkTranscriber } from "../../src/doctor/voice-checks.js";
import { startFakeSpeech } from "../fakes/speech-server.js";

describe("voice checks", () => {
  it("pass against servers that answer, serve the model, transcribe the sample and speak OGG/Opus", async () => {
    const fake = await startFakeSpeech({ defaultText: "beep" });
    try {
      const stt = await checkTranscriber({ baseURL: fake.baseURL, model: "whisper-1" });
      expect(stt.map((f) => [f.check, f.status])).toEqual([
        ["model", "pass"],
        ["sample", "pass"],
      ]);
      expect(stt[1]?.detail).toContain('"beep"');
      // The sample reached the server as a real audio upload.
      expect(fake.transcriptions[0]).toMatchObject({ fileType: "audio/wav", status: 200 });
      const tts = await checkSpeechServer({ baseURL: fake.baseURL, voice: "alloy" });
      expect(tts[0]).toMatchObject({ check: "speaks", status: "pass" });
      expect(tts[0]?.detail).toMatch(/said "Hello\." in \d\.\d s of OGG\/Opus/);
    } finally {
      await fake.close();
    }
  });

  it("fail with what to change: an unknown model, a server that is down", async () => {
    const fake = await startFakeSpeech();
    const wrong = await checkTranscriber({ baseURL: fake.baseURL, model: "large-v3" });
    expect(wrong.map((f) => [f.check, f.status])).toEqual([
      ["model", "fail"],
      ["sample", "fail"],
    ]);
    expect(wrong[0]?.fix).toMatch(/STT_MODEL/);
    await fake.close();
    const down = await checkTranscriber({ baseURL: fake.baseURL, model: "whisper-1" });
    expect(down).toEqual([expect.objectContaining({ check: "answers", status: "fail" })]);
    const mute = await checkSpeechServer({ baseURL: fake.baseURL, voice: "alloy" });
    expect(mute[0]).toMatchObject({ status: "fail", fix: expect.stringMatching(/TTS_BASE_URL/) });
  });
});
