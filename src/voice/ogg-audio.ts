/**
 * What an OGG file says about itself, without decoding: every page's capture pattern and CRC (a corrupt file
 * fails before any transcriber sees it), the codec, and the duration from the last granule position (Opus
 * counts 48 kHz samples after its pre-skip, RFC 7845 §4). Voice notes on both platforms are OGG/Opus.
 */

/** What an OGG file holds. */
interface OggAudioInfo {
  codec: "opus" | "vorbis";
  durationSeconds: number;
  /** Pages read (for tests). */
  pages: number;
}

/** The bytes are not a readable OGG file; `message` says why in a few words. */
export class OggError extends Error {
  override readonly name = "OggError";
}

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let r = i << 24;
    for (let j = 0; j < 8; j++) r = r & 0x80000000 ? (r << 1) ^ 0x04c11db7 : r << 1;
    table[i] = r >>> 0;
  }
  return table;
})();

/** The OGG page checksum (CRC-32, polynomial 0x04c11db7, not reflected, over the page with its CRC field zeroed). */
function oggCrc(page: Uint8Array): number {
  let crc = 0;
  for (let i = 0; i < page.length; i++) {
    // Bytes 22..25 hold the CRC itself and count as zero.
    const byte = i >= 22 && i < 26 ? 0 : (page[i] as number);
    crc = ((crc << 8) ^ (CRC_TABLE[((crc >>> 24) ^ byte) & 0xff] as number)) >>> 0;
  }
  return crc;
}

/** True when the bytes start like an OGG file. */
export function looksLikeOgg(bytes: Uint8Array): boolean {
  return bytes.length >= 4 && bytes[0] === 0x4f && bytes[1] === 0x67 && bytes[2] === 0x67 && bytes[3] === 0x53;
}

/** Parses an OGG file's pages; throws OggError when it is not whole and valid. */
export function readOggAudio(bytes: Uint8Array): OggAudioInfo {
  if (!looksLikeOgg(bytes)) throw new OggError("not an OGG file");
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let offset = 0;
  let pages = 0;
  let codec: OggAudioInfo["codec"] | undefined;
  let preSkip = 0;
  let sampleRate = 48_000;
  let lastGranule = 0n;
  while (offset < bytes.length) {
    if (offset + 27 > bytes.length) throw new OggError("truncated OGG page");
    if (view.getUint32(offset) !== 0x4f676753) throw new OggError("broken OGG page");
    const segments = bytes[offset + 26] as number;
    const headerEnd = offset + 27 + segments;
    if (headerEnd > bytes.length) throw new OggError("truncated OGG page");
    let bodyLength = 0;
    for (let i = offset + 27; i < headerEnd; i++) bodyLength += bytes[i] as number;
    const end = headerEnd + bodyLength;
    if (end > bytes.length) throw new OggError("truncated OGG page");
    const page = bytes.subarray(offset, end);
    if (oggCrc(page) !== view.getUint32(offset + 22, true)) throw new OggError("OGG page checksum mismatch");
    const granule = view.getBigInt64(offset + 6, true);
    if (pages === 0) {
      const body = bytes.subarray(headerEnd, end);
      const head = new TextDecoder().decode(body.subarray(0, 8));
      if (head === "OpusHead" && body.length >= 12) {
        codec = "opus";
        preSkip = (body[10] as number) | ((body[11] as number) << 8);
      } else if (body[0] === 1 && new TextDecoder().decode(body.subarray(1, 7)) === "vorbis" && body.length >= 16) {
        codec = "vorbis";
        sampleRate = new DataView(body.buffer, body.byteOffset + 12, 4).getUint32(0, true);
      } else throw new OggError("OGG file without Opus or Vorbis audio");
    }
    // -1 marks a page where no packet ends; it carries no position.
    if (granule >= 0n) lastGranule = granule;
    pages++;
    offset = end;
  }
  if (!codec) throw new OggError("empty OGG file");
  const samples = Number(lastGranule) - (codec === "opus" ? preSkip : 0);
  return { codec, durationSeconds: Math.max(0, samples) / (codec === "opus" ? 48_000 : sampleRate || 48_000), pages };
}
