/**
 * A chat picture made fit for a small vision model: decoded with sharp, turned upright (EXIF),
 * scaled to at most 1024 px on its longer side, and re-encoded as JPEG (PNG when it has
 * transparency). The header is read before anything is decoded, so a "decompression bomb"
 * (a small file claiming 30000×30000 pixels) is refused without allocating its pixels.
 */
import type { Metadata } from "sharp";
import type { ChatImage } from "../contracts/chat-message.js";
import { AttachmentError } from "../contracts/file-source.js";

/** Limits of the preparation. */
export interface ImageLimits {
  /** Longer side after scaling (default 1024). */
  maxSide?: number;
  /** Most pixels a picture may have to be decoded at all (default 40 megapixels). */
  maxInputPixels?: number;
}

const DEFAULT_MAX_SIDE = 1024;
const DEFAULT_MAX_PIXELS = 40_000_000;

/** Decodes, scales and re-encodes one picture; rejects with AttachmentError("refused") when it cannot. */
export async function prepareImage(
  name: string,
  bytes: Uint8Array,
  limits: ImageLimits = {},
): Promise<ChatImage & { width: number; height: number }> {
  // Loaded on the first picture: libvips costs a third of a second at start, and most workers see few pictures.
  const { default: sharp } = await import("sharp");
  const maxSide = limits.maxSide ?? DEFAULT_MAX_SIDE;
  const maxPixels = limits.maxInputPixels ?? DEFAULT_MAX_PIXELS;
  let meta: Metadata;
  try {
    meta = await sharp(bytes, { limitInputPixels: false }).metadata();
  } catch {
    throw new AttachmentError("refused", `${name} could not be read as a picture`);
  }
  const width = meta.width ?? 0;
  const height = meta.height ?? 0;
  if (width <= 0 || height <= 0) throw new AttachmentError("refused", `${name} could not be read as a picture`);
  if (width * height > maxPixels) {
    throw new AttachmentError("refused", `${name} is too big to open (${width}×${height} pixels)`);
  }
  try {
    // limitInputPixels again: the decoder itself refuses what the header understated.
    const pipeline = sharp(bytes, { limitInputPixels: maxPixels, failOn: "error", pages: 1 })
      .rotate()
      .resize({ width: maxSide, height: maxSide, fit: "inside", withoutEnlargement: true });
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
