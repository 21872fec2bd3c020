/**
 * The waveform a Discord voice message shows: up to 256 one-byte amplitudes. With no Opus decoder at hand,
 * loudness is read from packet sizes: a variable-bitrate encoder spends bytes on sound and almost none on
 * silence. Each packet's duration comes from its TOC byte (RFC 6716 §3.1); packets of ≤ 2 bytes are silence.
 */
import { readOggAudio } from "./ogg-audio.js";

/** Discord's waveform holds at most this many samples. */
const MAX_WAVEFORM_SAMPLES = 256;

/** One Opus packet: where it starts in the recording and how long it plays (seconds), and its size. */
interface OpusPacket {
  start: number;
  seconds: number;
  bytes: number;
}

/** Milliseconds of one Opus frame by the TOC's configuration number (0..31). */
function frameMs(config: number): number {
  if (config < 12) return [10, 20, 40, 60][config % 4] as number; // SILK
  if (config < 16) return [10, 20][config % 2] as number; // Hybrid
  return [2.5, 5, 10, 20][config % 4] as number; // CELT
}

/** Seconds one Opus packet plays, from its TOC byte (and the frame count byte for code 3). */
export function opusPacketSeconds(packet: Uint8Array): number {
  if (packet.length === 0) return 0;
  const toc = packet[0] as number;
  const code = toc & 3;
  const frames = code === 0 ? 1 : code === 3 ? (packet[1] ?? 0) & 0x3f : 2;
  return (frames * frameMs(toc >> 3)) / 1000;
}

/** The packets of an OGG file's first logical stream, in order (each spans one or more pages). */
function oggPackets(bytes: Uint8Array): Uint8Array[] {
  const packets: Uint8Array[] = [];
  let pending: Uint8Array[] = [];
  let offset = 0;
  while (offset + 27 <= bytes.length) {
    const segments = bytes[offset + 26] as number;
    let body = offset + 27 + segments;
    let start = body;
    for (let i = 0; i < segments; i++) {
      const lacing = bytes[offset + 27 + i] as number;
      body += lacing;
      // A lacing value under 255 ends a packet; 255 continues it (on this page or the next).
      if (lacing < 255) {
        pending.push(bytes.subarray(start, body));
        packets.push(pending.length === 1 ? pending[0]! : Buffer.concat(pending));
        pending = [];
        start = body;
      }
    }
    if (start < body) pending.push(bytes.subarray(start, body));
    offset = body;
  }
  return packets;
}

/** How many waveform samples a recording of `seconds` gets: one per 100 ms, as Discord's clients record, 1..256. */
export function waveformSamplesFor(seconds: number): number {
  return Math.min(MAX_WAVEFORM_SAMPLES, Math.max(1, Math.round(seconds * 10)));
}

/**
 * The waveform of an OGG/Opus file: `samples` amplitudes 0..255 (default one per 100 ms, at most 256),
 * the loudest stretch at 255. Throws OggError when the file is not whole OGG/Opus.
 */
export function opusWaveform(bytes: Uint8Array, samples?: number): Uint8Array {
  const info = readOggAudio(bytes);
  if (info.codec !== "opus") throw new TypeError("a waveform is read from OGG/Opus only");
  const packets: OpusPacket[] = [];
  let clock = 0;
  // The first two packets are the OpusHead and OpusTags headers (RFC 7845 §3).
  for (const packet of oggPackets(bytes).slice(2)) {
    const seconds = opusPacketSeconds(packet);
    packets.push({ start: clock, seconds, bytes: packet.length > 2 ? packet.length : 0 });
    clock += seconds;
  }
  const count = Math.min(MAX_WAVEFORM_SAMPLES, Math.max(1, Math.round(samples ?? waveformSamplesFor(clock))));
  const out = new Uint8Array(count);
  if (clock === 0) return out;
  // Bytes per second over each sample's stretch of time (a packet split across two stretches counts in both, pro rata).
  const density = new Float64Array(count);
  const step = clock / count;
  for (const p of packets) {
    if (p.bytes === 0 || p.seconds === 0) continue;
    const end = p.start + p.seconds;
    for (let i = Math.floor(p.start / step); i < count && i * step < end; i++) {
      const overlap = Math.min(end, (i + 1) * step) - Math.max(p.start, i * step);
      if (overlap > 0) density[i] = (density[i] as number) + (p.bytes * overlap) / p.seconds / step;
    }
  }
  const loudest = Math.max(...density);
  // Silence still costs an encoder a few bytes a frame: the quietest stretch is drawn as zero when it is
  // clearly quieter than the loudest (a recording that is loud throughout keeps its level).
  const quietest = Math.min(...density);
  const floor = quietest < loudest / 2 ? quietest : 0;
  if (loudest > floor)
    for (let i = 0; i < count; i++) out[i] = Math.round((255 * ((density[i] as number) - floor)) / (loudest - floor));
  return out;
}
