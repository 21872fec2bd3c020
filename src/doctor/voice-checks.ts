/**
 * The speech servers, when configured: the transcriber answers, has STT_MODEL (when it lists its models) and
 * transcribes a one-second sample; the speech server makes playable OGG/Opus with TTS_VOICE.
 */
import { findingsOf, type SetupFinding } from "../contracts/setup-finding.js";
import { createSpeechSynthesiser } from "../voice/speech-synthesiser.js";
import { createTranscriber } from "../voice/transcriber.js";
import { readOggAudio } from "../voice/ogg-audio.js";

/** One second of a 440 Hz tone as 16 kHz mono 16-bit WAV: a sample every transcription server decodes. */
export function oneSecondSample(): Uint8Array {
  const rate = 16_000;
  const data = Buffer.alloc(rate * 2);
  for (let i = 0; i < rate; i++) data.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 440 * i) / rate)), i * 2);
  const header = Buffer.alloc(44);
  header.write("RIFF", 0);
  header.writeUInt32LE(36 + data.length, 4);
  header.write("WAVEfmt ", 8);
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write("data", 36);
  header.writeUInt32LE(data.length, 40);
  return new Uint8Array(Buffer.concat([header, data]));
}

const reason = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** Checks the transcription server. */
export async function checkTranscriber(opts: {
  baseURL: string;
  model: string;
  apiKey?: string;
  timeoutMs?: number;
}): Promise<SetupFinding[]> {
  const f = findingsOf("Transcriber");
  const base = opts.baseURL.replace(/\/+$/, "");
  const headers = { authorization: `Bearer ${opts.apiKey ?? "sk-local"}` };
  const out: SetupFinding[] = [];
  try {
    const res = await fetch(`${base}/models`, { headers, signal: AbortSignal.timeout(opts.timeoutMs ?? 10_000) });
    if (res.ok) {
      const ids = (((await res.json()) as { data?: { id?: string }[] }).data ?? []).map((m) => m.id);
      out.push(
        ids.includes(opts.model)
          ? f.pass("model", `${opts.model} is served`)
          : f.fail(
              "model",
              `${opts.model} is not among the served models (${ids.join(", ") || "none"})`,
              "Set STT_MODEL to one of them, or load that model in the server.",
            ),
      );
    } else out.push(f.skip("model", `the server does not list its models (GET /models: ${res.status})`));
  } catch (error) {
    return [
      f.fail(
        "answers",
        `${base} does not answer: ${reason(error)}`,
        "Start the whisper server (docker compose --profile speech up -d) or correct STT_BASE_URL.",
      ),
    ];
  }
  try {
    const text = await createTranscriber(opts).transcribe(
      { bytes: oneSecondSample(), name: "doctor-sample.wav", contentType: "audio/wav" },
      { timeoutMs: opts.timeoutMs ?? 60_000 },
    );
    out.push(f.pass("sample", `a one-second sample came back as text (${JSON.stringify(text.slice(0, 40))})`));
  } catch (error) {
    out.push(f.fail("sample", `a one-second sample was not transcribed: ${reason(error)}`, "See the server's log."));
  }
  return out;
}

/** Checks the speech server. */
export async function checkSpeechServer(opts: { baseURL: string; voice: string }): Promise<SetupFinding[]> {
  const f = findingsOf("Speech server");
  try {
    const bytes = await createSpeechSynthesiser({ ...opts, timeoutMs: 60_000 }).speak("Hello.");
    const { durationSeconds } = readOggAudio(bytes);
    return [f.pass("speaks", `voice ${opts.voice} said "Hello." in ${durationSeconds.toFixed(1)} s of OGG/Opus`)];
  } catch (error) {
    return [
      f.fail(
        "speaks",
        `no playable OGG/Opus for "Hello.": ${reason(error)}`,
        "Start the speech server (docker compose --profile speech up -d), correct TTS_BASE_URL or pick a voice it has (TTS_VOICE).",
      ),
    ];
  }
}
