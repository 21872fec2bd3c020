/**
 * Real voice notes for tests, made the way Telegram and Discord clients make them: OGG/Opus,
 * 48 kHz mono, by Debian's ffmpeg (libopus). The frequency makes each note's bytes different, so
 * the fake transcriber can tell them apart.
 */
import { execFile } from "node:child_process";

/**
 * `seconds` of a tone as an OGG/Opus voice note (default 1.5 s at 440 Hz). Long notes are silence
 * encoded at the encoder's fastest settings (a 20-minute note takes seconds, not a minute).
 */
export function voiceNote(
  opts: { seconds?: number; frequency?: number /** Seconds of silence after the tone. */; silenceAfter?: number } = {},
): Promise<Buffer> {
  const seconds = opts.seconds ?? 1.5;
  const pad = opts.silenceAfter ? ["-af", `apad=pad_dur=${opts.silenceAfter}`] : [];
  const long = seconds > 60;
  const source = long ? "anullsrc=r=48000:cl=mono" : `sine=frequency=${opts.frequency ?? 440}:duration=${seconds}`;
  const fast = long ? ["-t", String(seconds), "-frame_duration", "60", "-compression_level", "0"] : [];
  return new Promise((resolve, reject) => {
    execFile(
      "ffmpeg",
      [
        "-loglevel",
        "error",
        "-f",
        "lavfi",
        "-i",
        source,
        ...pad,
        ...fast,
        "-ar",
        "48000",
        "-ac",
        "1",
        "-c:a",
        "libopus",
        "-b:a",
        "16k",
        "-application",
        "voip",
        "-f",
        "ogg",
        "pipe:1",
      ],
      { encoding: "buffer", maxBuffer: 64 * 1024 * 1024 },
      (error, stdout) => (error ? reject(error) : resolve(stdout)),
    );
  });
}
