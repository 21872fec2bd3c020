/**
 * A chat picture made fit for a small vision model: upright (EXIF), at most 1024 px a side, JPEG (PNG with
 * transparency). The header is read first, so a decompression bomb is refused without allocating its pixels.
 */
import type { Metadata } from "sharp";
import type { ChatImage } from "../contracts/chat-message.js";
import { AttachmentError } from "../contracts/file-source.js";

const MAX_SIDE = 1024;
/** Most pixels a picture may have to be decoded at all. */
const MAX_PIXELS = 40_000_000;

/** Decodes, scales and re-encodes one picture; rejects with AttachmentError("refused") when it cannot. */
export async function prepareImage(
  name: string,
  bytes: Uint8Array,
): Promise<ChatImage & { width: number; height: number }> {
  // Loaded on the first picture: libvips costs a third of a second at start, and most workers see few pictures.
  const { default: sharp } = await import("sharp");
  let meta: Metadata;
  try {
    meta = await sharp(bytes, { limitInputPixels: false }).metadata();
  } catch {
    throw new AttachmentError("refused", `${name} could not be read as a picture`);
  }
  const width = meta.width ?? 0;
  const height = meta.height ?? 0;
  if (width <= 0 || height <= 0) throw new AttachmentError("refused", `${name} could not be read as a picture`);
  if (width * height > MAX_PIXELS)
    throw new AttachmentError("refused", `${name} is too big to open (${width}×${height} pixels)`);
  try {
    // limitInputPixels again: the decoder itself refuses what the header understated.
    const pipeline = sharp(bytes, { limitInputPixels: MAX_PIXELS, failOn: "error", pages: 1 })
      .rotate()
      .resize({ width: MAX_SIDE, height: MAX_SIDE, fit: "inside", withoutEnlargement: true });
    const transparent = meta.hasAlpha === true;
    const { data, info } = transparent
      ? await pipeline.png({ compressionLevel: 9 }).toBuffer({ resolveWithObject: true })
      : await pipeline
          .flatten({ background: "#ffffff" })
          .jpeg({ quality: 85, mozjpeg: true })
          .toBuffer({ resolveWithObject: true });
    return {
      name,
      mediaType: transparent ? "image/png" : "image/jpeg",
      base64: data.toString("base64"),
      width: info.width,
      height: info.height,
    };
  } catch {
    throw new AttachmentError(
      "refused",
      `${name} could not be read as a picture (the file is damaged or not a supported format)`,
    );
  }
}
