/**
 * Text to speech through an OpenAI-compatible `POST /audio/speech` (Kokoro-FastAPI, speaches, OpenAI), asking
 * for OGG/Opus: what Telegram and Discord both play as a voice message, so nothing is converted here.
 */
import OpenAI from "openai";

/** Makes speech of a text. */
export interface SpeechSynthesiser {
  /** The OGG/Opus bytes of `text` spoken. */
  speak(text: string, opts?: { signal?: AbortSignal }): Promise<Uint8Array>;
}

/** Where the speech server is. */
interface SpeechSynthesiserOptions {
  /** TTS_BASE_URL, e.g. `http://kokoro:8880/v1`. */
  baseURL: string;
  /** TTS_VOICE. */
  voice: string;
  /** The server's model name ("tts-1" is the alias Kokoro-FastAPI, openedai-speech and OpenAI take). */
  model?: string;
  apiKey?: string;
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/** Creates the synthesiser for TTS_BASE_URL. */
export function createSpeechSynthesiser(opts: SpeechSynthesiserOptions): SpeechSynthesiser {
  const client = new OpenAI({
    baseURL: opts.baseURL,
    apiKey: opts.apiKey ?? "sk-local",
    maxRetries: 0,
    timeout: opts.timeoutMs ?? 60_000,
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  });
  return {
    async speak(text, call = {}) {
      const response = await client.audio.speech.create(
        { model: opts.model ?? "tts-1", voice: opts.voice, input: text, response_format: "opus" },
        call.signal ? { signal: call.signal } : {},
      );
      return new Uint8Array(await response.arrayBuffer());
    },
  };
}
