/**
 * Speech to text through an OpenAI-compatible `POST /audio/transcriptions` (whisper-server, speaches, vLLM,
 * LocalAI, OpenAI). A failure is a TranscriptionError whose code decides what the user is told.
 */
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError, toFile } from "openai";

/** A transcription that did not happen; `message` is for the log, `code` decides the user's line. */
export class TranscriptionError extends Error {
  override readonly name = "TranscriptionError";
  constructor(
    readonly code: "unreachable" | "timeout" | "refused" | "failed",
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

/** One audio file to transcribe. */
interface AudioFile {
  bytes: Uint8Array;
  name: string;
  contentType: string;
}

/** Turns speech into text. */
export interface Transcriber {
  /** The words heard (trimmed; "" when nothing was said). */
  transcribe(file: AudioFile, opts?: { signal?: AbortSignal; timeoutMs?: number }): Promise<string>;
}

/** Where the transcription server is. */
interface TranscriberOptions {
  /** STT_BASE_URL, e.g. `http://whisper:8080/v1`. */
  baseURL: string;
  /** STT_MODEL. */
  model: string;
  /** STT_API_KEY (local servers take any). */
  apiKey?: string;
  /** Default time one transcription may take (default 60 s). */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

/** Creates the transcriber for STT_BASE_URL. */
export function createTranscriber(opts: TranscriberOptions): Transcriber {
  const client = new OpenAI({
    baseURL: opts.baseURL,
    apiKey: opts.apiKey ?? "sk-local",
    // A voice note is answered once: a retry would double the wait the user already sits through.
    maxRetries: 0,
    timeout: opts.timeoutMs ?? 60_000,
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  });
  return {
    async transcribe(file, call = {}) {
      try {
        const result = await client.audio.transcriptions.create(
          {
            file: await toFile(file.bytes, file.name, { type: file.contentType || "application/octet-stream" }),
            model: opts.model,
            response_format: "json",
          },
          { ...(call.signal ? { signal: call.signal } : {}), ...(call.timeoutMs ? { timeout: call.timeoutMs } : {}) },
        );
        return (typeof result.text === "string" ? result.text : "").trim();
      } catch (error) {
        throw asTranscriptionError(error);
      }
    },
  };
}

/** Maps the SDK's errors to what the user is told (an abort by the job passes through unchanged). */
function asTranscriptionError(error: unknown): unknown {
  if (error instanceof APIUserAbortError) return error;
  if (error instanceof APIConnectionTimeoutError) return new TranscriptionError("timeout", "transcriber timed out");
  if (error instanceof APIConnectionError)
    return new TranscriptionError("unreachable", `transcriber unreachable: ${error.message}`);
  if (error instanceof APIError) {
    const status = error.status;
    // 400/413/415/422: the server read the request and refused this file (not audio, corrupt, too big).
    const code = status !== undefined && [400, 413, 415, 422].includes(status) ? "refused" : "failed";
    return new TranscriptionError(code, `transcriber answered ${status}: ${error.message}`, status);
  }
  return new TranscriptionError("failed", error instanceof Error ? error.message : String(error));
}
