/**
 * A fake OpenAI-compatible speech server on 127.0.0.1, speaking real HTTP the way speaches /
 * whisper.cpp's server / OpenAI do:
 * - `POST /v1/audio/transcriptions`: multipart/form-data with `file` (required), `model`
 *   (required, must be a listed model: else 404 `model_not_found`), `response_format`
 *   (`json` | `text` | `verbose_json`; others 400). Files over 25 MB get 413. The upload is
 *   decoded for real (ffprobe, as the real servers decode with ffmpeg): bytes that are no audio get
 *   400 "Invalid file format…", audio that does not decode 400 "Audio file could not be decoded…".
 *   The text is what the test registered for those exact bytes (`hears`), else `defaultText`.
 *   Errors are OpenAI's body: `{ error: { message, type, param, code } }`.
 * - `POST /v1/audio/speech`: JSON `{ model, input, voice, response_format }`; answers `opus` with a
 *   real OGG/Opus file (a tone, 50 ms per character of input, made by ffmpeg), `wav` likewise.
 * - `GET /v1/models`: the models it serves.
 * Faults: `down()` closes the listener (connection refused), `setDelay(ms)` holds transcriptions.
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

/** One transcription request as the fake saw it. */
export interface TranscriptionRequest {
  model: string | undefined;
  responseFormat: string | undefined;
  fileName: string | undefined;
  fileType: string | undefined;
  bytes: number;
  status: number;
}

/** One speech request as the fake saw it. */
export interface SpeechRequest {
  input: string;
  voice: string | undefined;
  responseFormat: string | undefined;
  status: number;
  /** Seconds of audio the fake made. */
  seconds: number;
}

/** The running fake. */
export interface FakeSpeech {
  /** `http://127.0.0.1:<port>/v1`: what STT_BASE_URL / TTS_BASE_URL take. */
  baseURL: string;
  transcriptions: TranscriptionRequest[];
  speech: SpeechRequest[];
  /** Registers the text the fake "hears" in these exact audio bytes. */
  hears(audio: Uint8Array, text: string): void;
  /** Holds each transcription `ms` before answering. */
  setDelay(ms: number): void;
  /** Stops listening (later requests: connection refused) until `up()`. */
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
}

/** Options of the fake. */
export interface FakeSpeechOptions {
  models?: string[];
  /** The text of audio nobody registered (default "hello"). */
  defaultText?: string;
  /** Decode each upload with ffprobe (default true); load tests turn it off to measure the bot, not ffprobe. */
  decode?: boolean;
}

const MAX_UPLOAD_BYTES = 25 * 1024 * 1024;
const FORMATS = ["json", "text", "verbose_json", "srt", "vtt"];

function sendError(res: ServerResponse, status: number, message: string, param: string | null, code: string | null) {
  res
    .writeHead(status, { "content-type": "application/json" })
    .end(JSON.stringify({ error: { message, type: "invalid_request_error", param, code } }));
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** What ffprobe makes of the bytes: a duration, or why it could not read them. */
function probe(bytes: Uint8Array): Promise<{ seconds: number } | { error: "not-audio" | "undecodable" }> {
  return new Promise((resolve) => {
    const child = execFile(
      "ffprobe",
      ["-v", "error", "-show_entries", "stream=codec_type:format=duration", "-of", "json", "-i", "pipe:0"],
      { maxBuffer: 1024 * 1024 },
      (error, stdout, stderr) => {
        let parsed: { streams?: { codec_type?: string }[]; format?: { duration?: string } } = {};
        try {
          parsed = JSON.parse(stdout || "{}");
        } catch {}
        const audio = parsed.streams?.some((s) => s.codec_type === "audio");
        if (!audio) return resolve({ error: "not-audio" });
        if (error || /error|invalid|corrupt/i.test(stderr)) return resolve({ error: "undecodable" });
        resolve({ seconds: Number(parsed.format?.duration ?? 0) });
      },
    );
    child.stdin?.on("error", () => {});
    child.stdin?.end(Buffer.from(bytes));
  });
}

/** Makes `seconds` of a tone as OGG/Opus (or WAV) with ffmpeg. */
export function synthesiseTone(seconds: number, format: "opus" | "wav" = "opus"): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const codec = format === "opus" ? ["-c:a", "libopus", "-b:a", "24k", "-f", "ogg"] : ["-f", "wav"];
    execFile(
      "ffmpeg",
      [
        "-loglevel",
        "error",
        "-f",
        "lavfi",
        "-i",
        `sine=frequency=330:duration=${seconds.toFixed(2)}`,
        "-ar",
        "48000",
        "-ac",
        "1",
        ...codec,
        "pipe:1",
      ],
      { encoding: "buffer", maxBuffer: 64 * 1024 * 1024 },
      (error, stdout) => (error ? reject(error) : resolve(stdout)),
    );
  });
}

const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

/** Starts the fake on a free loopback port. */
export async function startFakeSpeech(options: FakeSpeechOptions = {}): Promise<FakeSpeech> {
  const models = options.models ?? ["whisper-1", "tts-1"];
  const known = new Map<string, string>();
  const transcriptions: TranscriptionRequest[] = [];
  const speech: SpeechRequest[] = [];
  const sockets = new Set<Socket>();
  let delayMs = 0;

  const route = async (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? "/").split("?")[0];
    const body = await readBody(req);
    if (req.method === "GET" && path === "/v1/models") {
      res.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({
          object: "list",
          data: models.map((id) => ({ id, object: "model", created: 0, owned_by: "fake" })),
        }),
      );
      return;
    }
    if (req.method === "POST" && path === "/v1/audio/transcriptions") {
      const record: TranscriptionRequest = {
        model: undefined,
        responseFormat: undefined,
        fileName: undefined,
        fileType: undefined,
        bytes: body.length,
        status: 0,
      };
      transcriptions.push(record);
      const fail = (status: number, message: string, param: string | null, code: string | null = null) => {
        record.status = status;
        sendError(res, status, message, param, code);
      };
      if (body.length > MAX_UPLOAD_BYTES)
        return fail(413, "Maximum content size limit (26214400) exceeded.", "file", "file_too_large");
      const type = req.headers["content-type"] ?? "";
      if (!type.startsWith("multipart/form-data"))
        return fail(400, "Invalid Content-Type header: expected multipart/form-data.", null);
      let form: FormData;
      try {
        form = await new Request("http://fake/", {
          method: "POST",
          headers: { "content-type": type },
          body: new Uint8Array(body),
        }).formData();
      } catch {
        return fail(400, "Could not parse multipart form", null);
      }
      const file = form.get("file");
      const model = form.get("model");
      const format = form.get("response_format") ?? "json";
      record.model = typeof model === "string" ? model : undefined;
      record.responseFormat = typeof format === "string" ? format : undefined;
      if (!(file instanceof Blob)) return fail(400, "you must provide a file", "file");
      record.fileName = (file as File).name;
      record.fileType = file.type;
      record.bytes = file.size;
      if (typeof model !== "string" || model === "") return fail(400, "you must provide a model parameter", "model");
      if (!models.includes(model)) return fail(404, `The model '${model}' does not exist`, "model", "model_not_found");
      if (typeof format !== "string" || !FORMATS.includes(format))
        return fail(400, `Invalid response_format '${String(format)}'`, "response_format");
      const bytes = new Uint8Array(await file.arrayBuffer());
      const probed = options.decode === false ? { seconds: 0 } : await probe(bytes);
      if ("error" in probed)
        return probed.error === "not-audio"
          ? fail(
              400,
              "Invalid file format. Supported formats: ['flac', 'm4a', 'mp3', 'mp4', 'mpeg', 'mpga', 'oga', 'ogg', 'wav', 'webm']",
              "file",
            )
          : fail(400, "Audio file could not be decoded or its format is not supported.", "file");
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      const text = known.get(sha(bytes)) ?? options.defaultText ?? "hello";
      record.status = 200;
      if (format === "text") res.writeHead(200, { "content-type": "text/plain" }).end(text);
      else
        res
          .writeHead(200, { "content-type": "application/json" })
          .end(
            JSON.stringify(
              format === "verbose_json" ? { task: "transcribe", duration: probed.seconds, text } : { text },
            ),
          );
      return;
    }
    if (req.method === "POST" && path === "/v1/audio/speech") {
      let params: { model?: string; input?: string; voice?: string; response_format?: string } = {};
      try {
        params = JSON.parse(body.toString("utf8"));
      } catch {
        return sendError(res, 400, "We could not parse the JSON body of your request.", null, null);
      }
      const record: SpeechRequest = {
        input: params.input ?? "",
        voice: params.voice,
        responseFormat: params.response_format,
        status: 0,
        seconds: 0,
      };
      speech.push(record);
      if (!params.input) {
        record.status = 400;
        return sendError(res, 400, "Missing required parameter: 'input'.", "input", "missing_required_parameter");
      }
      if (params.input.length > 4096) {
        record.status = 400;
        return sendError(res, 400, "String should have at most 4096 characters", "input", "string_too_long");
      }
      if (!params.voice) {
        record.status = 400;
        return sendError(res, 400, "Missing required parameter: 'voice'.", "voice", "missing_required_parameter");
      }
      const format = params.response_format ?? "mp3";
      if (format !== "opus" && format !== "wav") {
        record.status = 400;
        return sendError(res, 400, `This fake serves opus and wav, not ${format}`, "response_format", null);
      }
      record.seconds = Math.max(0.5, Math.round(params.input.length * 0.05 * 100) / 100);
      const audio = await synthesiseTone(record.seconds, format);
      record.status = 200;
      res.writeHead(200, { "content-type": format === "opus" ? "audio/ogg" : "audio/wav" }).end(audio);
      return;
    }
    sendError(res, 404, `Unknown route ${req.method} ${path}`, null, "unknown_url");
  };

  const server = createServer((req, res) => {
    route(req, res).catch((error: unknown) => {
      if (!res.headersSent) sendError(res, 500, `fake speech crashed: ${String(error)}`, null, null);
      else res.destroy();
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  const listen = (port: number) =>
    new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => {
        server.off("error", reject);
        resolve();
      });
    });
  await listen(0);
  const port = (server.address() as AddressInfo).port;
  const stop = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy();
      server.close(() => resolve());
    });
  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    transcriptions,
    speech,
    hears: (audio, text) => known.set(sha(audio), text),
    setDelay: (ms) => {
      delayMs = ms;
    },
    down: stop,
    up: () => listen(port),
    close: () => (server.listening ? stop() : Promise.resolve()),
  };
}
