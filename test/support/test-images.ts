/**
 * Pictures and documents for the attachment tests, made with the real sharp (and by hand where a
 * file must be hostile): a two-colour photo whose halves can be checked after scaling, noise that
 * does not compress, a PNG whose header claims 30000×30000 pixels, a one-page PDF with a text layer.
 */
import { createDeflate, deflateSync, crc32 } from "node:zlib";
import sharp from "sharp";

/** A JPEG: left half red, right half blue (so a scaled copy can be recognised). */
export async function twoColourPhoto(width: number, height: number): Promise<Buffer> {
  const half = Math.floor(width / 2);
  const left = await sharp({ create: { width: half, height, channels: 3, background: "#ff0000" } })
    .png()
    .toBuffer();
  return sharp({ create: { width, height, channels: 3, background: "#0000ff" } })
    .composite([{ input: left, left: 0, top: 0 }])
    .jpeg({ quality: 90 })
    .toBuffer();
}

/** A PNG of random pixels: about width × height × 3 bytes, whatever the compression. */
export function noisePng(width: number, height: number): Promise<Buffer> {
  const raw = Buffer.alloc(width * height * 3);
  for (let i = 0; i < raw.length; i++) raw[i] = (i * 2654435761) >>> 24;
  return sharp(raw, { raw: { width, height, channels: 3 } })
    .png({ compressionLevel: 0 })
    .toBuffer();
}

/** A PNG with an alpha channel (a transparent picture stays PNG). */
export function transparentPng(width: number, height: number): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 4, background: { r: 0, g: 128, b: 0, alpha: 0.5 } } })
    .png()
    .toBuffer();
}

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** A "decompression bomb": a valid PNG header claiming width × height greyscale pixels, then the first rows of zeros. */
export function pngBomb(width: number, height: number): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.writeUInt8(8, 8); // bit depth
  header.writeUInt8(0, 9); // greyscale
  const rows = deflateSync(Buffer.alloc((width + 1) * 16));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", rows),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

/** A one-page PDF (Helvetica) whose text layer holds `text`. */
export function onePagePdf(text: string): Buffer {
  const content = `BT /F1 18 Tf 50 750 Td (${text.replace(/[()\\]/g, "\\$&")}) Tj ET`;
  return pdfWithContent(`<< /Length ${content.length} >>\nstream\n${content}\nendstream`);
}

/**
 * A one-page PDF whose content stream is `deflated` (zlib bytes, /FlateDecode): a page that inflates
 * to hundreds of MB fits in a few hundred KB.
 */
export function flatePagePdf(deflated: Buffer): Buffer {
  const head = Buffer.from(`<< /Length ${deflated.length} /Filter /FlateDecode >>\nstream\n`, "latin1");
  return pdfWithContent(Buffer.concat([head, deflated, Buffer.from("\nendstream", "latin1")]).toString("latin1"));
}

/** Deflates `prefix` and `repeat` copies of `unit` without ever holding them whole (zlib's best compression). */
export async function deflatedRepeat(unit: string, repeat: number, prefix = ""): Promise<Buffer> {
  const deflate = createDeflate({ level: 9 });
  const chunks: Buffer[] = [];
  deflate.on("data", (c: Buffer) => chunks.push(c));
  const done = new Promise((resolve) => deflate.on("end", resolve));
  deflate.write(Buffer.from(prefix, "latin1"));
  const perWrite = Math.max(1, Math.floor((1024 * 1024) / unit.length));
  const block = Buffer.from(unit.repeat(perWrite), "latin1");
  for (let written = 0; written < repeat; written += perWrite) {
    const part = written + perWrite <= repeat ? block : Buffer.from(unit.repeat(repeat - written), "latin1");
    if (!deflate.write(part)) await new Promise((resolve) => deflate.once("drain", resolve));
  }
  deflate.end();
  await done;
  return Buffer.concat(chunks);
}

function pdfWithContent(contentObject: string): Buffer {
  const objects = [
    "<< /Type /Catalog /Pages 2 0 R >>",
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
    contentObject,
    "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
  ];
  let out = "%PDF-1.4\n";
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join("")}`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, "latin1");
}

/** Decodes a `data:` URL the model received: its format, size and the colour of two sample pixels. */
export async function decodeDataUrl(
  url: string,
): Promise<{ format: string; width: number; height: number; leftPixel: number[]; rightPixel: number[] }> {
  const match = /^data:(image\/[a-z]+);base64,(.+)$/.exec(url);
  if (!match) throw new Error(`not an image data URL: ${url.slice(0, 40)}`);
  const bytes = Buffer.from(match[2] as string, "base64");
  const meta = await sharp(bytes).metadata();
  const { data, info } = await sharp(bytes).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const at = (x: number, y: number) => [...data.subarray((y * info.width + x) * 3, (y * info.width + x) * 3 + 3)];
  const y = Math.floor(info.height / 2);
  return {
    format: meta.format ?? "",
    width: info.width,
    height: info.height,
    leftPixel: at(Math.floor(info.width / 4), y),
    rightPixel: at(Math.floor((info.width * 3) / 4), y),
  };
}
