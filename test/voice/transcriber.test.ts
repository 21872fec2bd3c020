import { afterEach, describe, expect, it } from "vitest";
import { createTranscriber, TranscriptionError } from "../../src/voice/transcriber.js";
import { startFakeSpeech, type FakeSpeech } from "../fakes/speech-server.js";
import { voiceNote } from "../support/voice-notes.js";

let fake: FakeSpeech | undefined;
afterEach(async () => {
  await fake?.close();
  fake = undefined;
});

const file = (bytes: Uint8Array, name = "voice.ogg", contentType = "audio/ogg") => ({ bytes, name, contentType });

describe("createTranscriber", () => {
  it("uploads the note as multipart (file, model, response_format) and returns the words heard", async () => {
    fake = await startFakeSpeech();
    const note = await voiceNote();
    fake.hears(note, " What is the capital of France? ");
    const text = await createTranscriber({ baseURL: fake.baseURL, model: "whisper-1" }).transcribe(file(note));
    expect(text).toBe("What is the capital of France?");
    expect(fake.transcriptions).toEqual([
      {
        model: "whisper-1",
        responseFormat: "json",
        fileName: "voice.ogg",
        fileType: "audio/ogg",
        bytes: note.length,
        status: 200,
      },
    ]);
  });

  it("says which failure it was: a file that is no audio, an unknown model, a server down, a slow one", async () => {
    fake = await startFakeSpeech();
    const note = await voiceNote();
    const stt = createTranscriber({ baseURL: fake.baseURL, model: "whisper-1" });
    await expect(stt.transcribe(file(Buffer.from("just text"), "a.mp3", "audio/mpeg"))).rejects.toMatchObject({
      code: "refused",
      status: 400,
    });
    await expect(
      createTranscriber({ baseURL: fake.baseURL, model: "nope" }).transcribe(file(note)),
    ).rejects.toMatchObject({ code: "failed", status: 404 });
    fake.setDelay(2000);
    await expect(stt.transcribe(file(note), { timeoutMs: 300 })).rejects.toMatchObject({ code: "timeout" });
    await fake.down();
    const down = await stt.transcribe(file(note)).catch((e: unknown) => e);
    expect(down).toBeInstanceOf(TranscriptionError);
    expect(down).toMatchObject({ code: "unreachable" });
  });
});
