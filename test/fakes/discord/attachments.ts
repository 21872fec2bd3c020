/**
 * Attachments for the fake Discord: what users upload, served the way Discord's CDN serves them,
 * at `/attachments/<channel_id>/<attachment_id>/<filename>` with signed `ex`/`is`/`hm` query
 * parameters (a URL without its signature gets Discord's 404 "This content is no longer available.").
 */
import type { ServerResponse } from "node:http";
import { createHmac } from "node:crypto";
import type { APIAttachment } from "discord.js";
import sharp from "sharp";

/** What a test uploads with a message. */
export interface FakeAttachmentInput {
  filename: string;
  bytes: Buffer;
  /** Discord sets it from the upload; omit for files it cannot type. */
  contentType?: string;
  /** A voice message's recording: Discord stores its length and a base64 waveform (up to 256 one-byte samples). */
  voice?: { durationSecs: number; waveform: string };
}

/** The fake's attachment store and CDN. */
export function createFakeAttachments(opts: { origin: () => string; nextId: () => string; now: () => number }) {
  const files = new Map<string, { bytes: Buffer; contentType?: string }>();
  const secret = "fake-cdn-signing-key";
  const sign = (path: string, ex: string, is: string) =>
    createHmac("sha256", secret).update(`${path}|${ex}|${is}`).digest("hex");
  const downloads: { path: string; status: number }[] = [];

  /** Stores one file and returns its API object (no image dimensions). */
  const store = (channelId: string, input: FakeAttachmentInput): APIAttachment => {
    const id = opts.nextId();
    const path = `/attachments/${channelId}/${id}/${encodeURIComponent(input.filename)}`;
    const ex = Math.floor(opts.now() / 1000 + 86_400).toString(16);
    const is = Math.floor(opts.now() / 1000).toString(16);
    const query = `?ex=${ex}&is=${is}&hm=${sign(path, ex, is)}&`;
    files.set(path, { bytes: input.bytes, ...(input.contentType ? { contentType: input.contentType } : {}) });
    return {
      id,
      filename: input.filename,
      size: input.bytes.length,
      url: `${opts.origin()}${path}${query}`,
      proxy_url: `${opts.origin()}${path}${query}`,
      ...(input.contentType ? { content_type: input.contentType } : {}),
      ...(input.voice ? { duration_secs: input.voice.durationSecs, waveform: input.voice.waveform } : {}),
    };
  };

  return {
    downloads,
    /** Stores the files the bot sent with a message (served like any upload). */
    storeBotFiles: (channelId: string, inputs: readonly FakeAttachmentInput[]): APIAttachment[] =>
      inputs.map((input) => store(channelId, input)),
    /** Stores the uploads of one message and returns their API objects (image dimensions filled in like Discord does). */
    async upload(channelId: string, inputs: readonly FakeAttachmentInput[]): Promise<APIAttachment[]> {
      const out: APIAttachment[] = [];
      for (const input of inputs) {
        const stored = store(channelId, input);
        let size: { width?: number; height?: number } = {};
        if (input.contentType?.startsWith("image/")) {
          const meta = await sharp(input.bytes)
            .metadata()
            .catch(() => undefined);
          if (meta?.width && meta.height) size = { width: meta.width, height: meta.height };
        }
        out.push({ ...stored, ...size });
      }
      return out;
    },
    /** Serves a CDN URL; false when the path is not an attachment path. */
    serve(url: URL, res: ServerResponse): boolean {
      if (!url.pathname.startsWith("/attachments/")) return false;
      const file = files.get(url.pathname);
      const ex = url.searchParams.get("ex") ?? "";
      const is = url.searchParams.get("is") ?? "";
      const signed = url.searchParams.get("hm") === sign(url.pathname, ex, is);
      if (!file || !signed) {
        downloads.push({ path: url.pathname, status: 404 });
        res.writeHead(404, { "content-type": "text/plain" }).end("This content is no longer available.");
        return true;
      }
      downloads.push({ path: url.pathname, status: 200 });
      res
        .writeHead(200, {
          "content-type": file.contentType ?? "application/octet-stream",
          "content-length": String(file.bytes.length),
        })
        .end(file.bytes);
      return true;
    },
  };
}
