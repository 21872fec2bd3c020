/**
 * A voice note, audio file or video note made into words: length and OGG integrity are checked before any
 * upload, then it is transcribed. The user sees the transcript as `🎤 “…”`; a failure is one line, never a throw.
 */
import { looksLikeOgg, OggError, readOggAudio } from "../voice/ogg-audio.js";
import { TranscriptionError, type Transcriber } from "../voice/transcriber.js";
import type { AttachmentRef } from "../contracts/inbound-message.js";
import { AttachmentError } from "../contracts/file-source.js";
import { cutTextWithMarker } from "../shared/text-cut.js";

/** What a voice note became. */
interface HeardAudio {
  /** The line the model and the history get: the transcript, or why there is none. */
  marker: string;
  /** The line shown to the user above the answer. */
  notice: string;
  /** True when words were heard (false: the note alone gives the model nothing to answer). */
  heard: boolean;
}

/** How audio is handled. */
export interface AudioOptions {
  /** Undefined: no STT_BASE_URL, voice is not set up. */
  transcriber?: Transcriber;
  /** MAX_AUDIO_SECONDS. */
  maxSeconds: number;
  /** Time one transcription may take (default: the transcriber's own). */
  timeoutMs?: number;
  logger?: { warn(obj: object, msg?: string): void };
}

/** The line a voice note gets when no transcriber is configured. */
export const VOICE_NOT_SET_UP_NOTICE =
  "🎤 I cannot listen to voice messages here yet: no transcriber is set up. Please type your question. " +
  "(An admin sets `STT_BASE_URL` to a Whisper server, see docs/voice.md.)";

/** How much of the transcript the user is shown above the answer. */
const SHOWN_TRANSCRIPT_CHARS = 300;

/** "1:05" for 65 seconds. */
function clock(seconds: number): string {
  const whole = Math.round(seconds);
  return `${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, "0")}`;
}

/** Transcribes one audio attachment; `download` gets its bytes within the byte cap. */
export async function hearAudio(
  ref: AttachmentRef,
  download: () => Promise<Uint8Array>,
  opts: AudioOptions,
  signal?: AbortSignal,
): Promise<HeardAudio> {
  const name = ref.name;
  const unheard = (reason: string, notice: string): HeardAudio => ({
    marker: `[voice note: ${name} (${reason})]`,
    notice,
    heard: false,
  });
  if (!opts.transcriber) return unheard("not transcribed: voice is not set up", VOICE_NOT_SET_UP_NOTICE);
  const tooLong = (seconds: number) =>
    unheard(
      "too long to transcribe",
      `🎤 ${name} is ${clock(seconds)} long; I transcribe up to ${clock(opts.maxSeconds)}. Please send a shorter note or type it.`,
    );
  if (ref.durationSeconds !== undefined && ref.durationSeconds > opts.maxSeconds) return tooLong(ref.durationSeconds);
  let bytes: Uint8Array;
  try {
    bytes = await download();
  } catch (error) {
    if (signal?.aborted) throw error;
    if (!(error instanceof AttachmentError))
      opts.logger?.warn({ err: error, attachment: name }, "audio download failed");
    return unheard(
      "not readable",
      `⚠️ ${error instanceof AttachmentError ? error.message : `${name} could not be downloaded`}.`,
    );
  }
  // Voice notes are OGG/Opus on both platforms: their real length and integrity are known before any upload.
  if (looksLikeOgg(bytes) || /ogg|opus/i.test(ref.contentType)) {
    try {
      const info = readOggAudio(bytes);
      if (info.durationSeconds > opts.maxSeconds) return tooLong(info.durationSeconds);
    } catch (error) {
      if (!(error instanceof OggError)) throw error;
      return unheard("damaged", `🎤 ${name} could not be read as audio (${error.message}). Please record it again.`);
    }
  }
  let text: string;
  try {
    text = await opts.transcriber.transcribe(
      { bytes, name, contentType: ref.contentType },
      { ...(signal ? { signal } : {}), ...(opts.timeoutMs ? { timeoutMs: opts.timeoutMs } : {}) },
    );
  } catch (error) {
    if (signal?.aborted || !(error instanceof TranscriptionError)) throw error;
    opts.logger?.warn({ err: error, attachment: name }, "transcription failed");
    if (error.code === "refused")
      return unheard("not audio", `🎤 ${name} is not audio I can transcribe. Send a voice message or type it.`);
    return unheard(
      "not transcribed: the transcriber did not answer",
      `🎤 The transcriber did not answer, so I could not listen to ${name}. Please try again later or type it.`,
    );
  }
  const words = text.replace(/\s+/g, " ").trim();
  if (words === "") return unheard("no words heard", `🎤 I heard no words in ${name}.`);
  return {
    marker: `[voice note: ${name}] ${words}`,
    notice: `🎤 “${cutTextWithMarker(words, SHOWN_TRANSCRIPT_CHARS, "…")}”`,
    heard: true,
  };
}
