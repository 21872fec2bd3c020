/**
 * Files for the fake Telegram Bot API: what users send as photos, documents and voice notes, `getFile`, and
 * the download URL `/file/bot<token>/<file_path>`, with the real server's answers and limits
 * (photos recompressed to JPEG in the sizes Telegram makes, 90 to 2560 px; `getFile` refusing
 * files over 20 MB with "Bad Request: file is too big"; unknown ids "Bad Request: invalid file_id";
 * a wrong token on the download URL a 404).
 */
import type { ServerResponse } from "node:http";
import sharp from "sharp";

/** A file the fake holds. */
interface StoredFile {
  fileId: string;
  fileUniqueId: string;
  path: string;
  bytes: Buffer;
}

/**
 * What a test sends: a photo (any image sharp reads), a document (any bytes), or timed media: a voice
 * note (OGG/Opus, `mime_type` "audio/ogg" as Telegram clients record it), an audio file, a round video
 * note. The duration is what the client declares (Telegram does not check it).
 */
export type FakeMediaInput =
  | { kind: "photo"; bytes: Buffer; caption?: string }
  | { kind: "document"; bytes: Buffer; fileName: string; mimeType?: string; caption?: string }
  | { kind: "voice"; bytes: Buffer; duration: number; caption?: string }
  | { kind: "audio"; bytes: Buffer; duration: number; fileName?: string; mimeType?: string; caption?: string }
  | { kind: "video_note"; bytes: Buffer; duration: number };

/** Bots may download files up to this size (Bot API getFile). */
export const BOT_DOWNLOAD_LIMIT = 20 * 1024 * 1024;
const PHOTO_SIDES = [90, 320, 800, 1280, 2560];

/** The fake's file store. */
export class FakeTelegramFiles {
  private readonly byId = new Map<string, StoredFile>();
  private readonly byPath = new Map<string, StoredFile>();
  private seq = 0;
  /** Voice messages the bot sent (sendVoice), with their bytes as uploaded. */
  readonly sentVoices: { chatId: number; messageId: number; bytes: Buffer; duration?: number; caption?: string }[] = [];

  /** The `voice` field of a message the bot sent with sendVoice (the file kept like a user's). */
  botVoice(bytes: Buffer, duration: number | undefined): Record<string, unknown> {
    const file = this.add(bytes, "voice", "oga");
    return {
      voice: {
        file_id: file.fileId,
        file_unique_id: file.fileUniqueId,
        duration: duration ?? 0,
        mime_type: "audio/ogg",
        file_size: bytes.length,
      },
    };
  }

  /** Every download the fake served (path and status), for tests. */
  readonly downloads: { path: string; status: number }[] = [];

  private add(bytes: Buffer, folder: string, ext: string): StoredFile {
    const n = this.seq++;
    const file: StoredFile = {
      fileId: `AgACAgIAAxkBAAI${n.toString(36).padStart(6, "0")}${"x".repeat(40)}`,
      fileUniqueId: `AQAD${n.toString(36).padStart(8, "0")}`,
      path: `${folder}/file_${n}.${ext}`,
      bytes,
    };
    this.byId.set(file.fileId, file);
    this.byPath.set(file.path, file);
    return file;
  }

  /** The message fields of a photo or document, as a Telegram client's upload becomes them. */
  async media(input: FakeMediaInput): Promise<Record<string, unknown>> {
    if (input.kind === "voice" || input.kind === "audio" || input.kind === "video_note") {
      const folder = input.kind === "voice" ? "voice" : input.kind === "audio" ? "music" : "video_notes";
      const ext = input.kind === "voice" ? "oga" : input.kind === "audio" ? "mp3" : "mp4";
      const file = this.add(input.bytes, folder, ext);
      const base = {
        file_id: file.fileId,
        file_unique_id: file.fileUniqueId,
        duration: Math.round(input.duration),
        file_size: input.bytes.length,
      };
      if (input.kind === "voice") return { voice: { ...base, mime_type: "audio/ogg" } };
      if (input.kind === "video_note") return { video_note: { ...base, length: 384 } };
      return {
        audio: {
          ...base,
          ...(input.fileName ? { file_name: input.fileName } : {}),
          mime_type: input.mimeType ?? "audio/mpeg",
        },
      };
    }
    if (input.kind === "document") {
      const file = this.add(input.bytes, "documents", input.fileName.split(".").pop() ?? "bin");
      return {
        document: {
          file_id: file.fileId,
          file_unique_id: file.fileUniqueId,
          file_name: input.fileName,
          ...(input.mimeType ? { mime_type: input.mimeType } : {}),
          file_size: input.bytes.length,
        },
      };
    }
    const meta = await sharp(input.bytes).metadata();
    const longest = Math.max(meta.width ?? 1, meta.height ?? 1);
    const sides = [...PHOTO_SIDES.filter((s) => s < longest), Math.min(longest, 2560)];
    const photo = [];
    for (const side of [...new Set(sides)]) {
      const { data, info } = await sharp(input.bytes)
        .resize({ width: side, height: side, fit: "inside" })
        .flatten({ background: "#ffffff" })
        .jpeg({ quality: 87 })
        .toBuffer({ resolveWithObject: true });
      const file = this.add(data, "photos", "jpg");
      photo.push({
        file_id: file.fileId,
        file_unique_id: file.fileUniqueId,
        file_size: data.length,
        width: info.width,
        height: info.height,
      });
    }
    return { photo };
  }

  /** getFile: the File object, or the Bot API error. */
  getFile(
    params: Record<string, unknown>,
  ): { result: Record<string, unknown> } | { error: { code: number; description: string } } {
    const id = typeof params.file_id === "string" ? params.file_id : undefined;
    if (!id) return { error: { code: 400, description: "Bad Request: file_id not specified" } };
    const file = this.byId.get(id);
    if (!file) return { error: { code: 400, description: "Bad Request: invalid file_id" } };
    if (file.bytes.length > BOT_DOWNLOAD_LIMIT)
      return { error: { code: 400, description: "Bad Request: file is too big" } };
    return {
      result: {
        file_id: file.fileId,
        file_unique_id: file.fileUniqueId,
        file_size: file.bytes.length,
        file_path: file.path,
      },
    };
  }

  /** Serves `/file/bot<token>/<path>`; false when the URL is not a file URL. */
  serveDownload(pathname: string, token: string, res: ServerResponse): boolean {
    const route = /^\/file\/bot([^/]+)\/(.+)$/.exec(pathname);
    if (!route) return false;
    const path = decodeURIComponent(route[2] ?? "");
    const file = route[1] === token ? this.byPath.get(path) : undefined;
    this.downloads.push({ path, status: file ? 200 : 404 });
    if (!file) {
      res
        .writeHead(404, { "content-type": "application/json" })
        .end(JSON.stringify({ ok: false, error_code: 404, description: "Not Found" }));
      return true;
    }
    res
      .writeHead(200, { "content-type": "application/octet-stream", "content-length": String(file.bytes.length) })
      .end(file.bytes);
    return true;
  }
}
