/**
 * The final answer also as a voice message, when the chat's /voice mode asks (auto: the question was a voice note),
 * TTS is set and the port can send one. Long answers are spoken in part; a failure is logged, never shown.
 */
import type { InboundMessage } from "../contracts/inbound-message.js";
import type { ReplyPort } from "../contracts/reply-port.js";
import { attachmentKind } from "../attachments/attachment-kind.js";
import { readOggAudio } from "../voice/ogg-audio.js";
import { opusWaveform } from "../voice/ogg-waveform.js";
import type { SpeechSynthesiser } from "../voice/speech-synthesiser.js";
import { DEFAULT_VOICE_MODE, type VoiceMode } from "../settings/conversation-settings.js";

/** What speaking answers needs. */
export interface SpokenAnswers {
  synthesiser: SpeechSynthesiser;
  /** Characters spoken at most (default 600: about 40 seconds). */
  maxChars?: number;
  logger: { warn(obj: object, msg?: string): void };
}

/** The caption of a spoken answer that covers only the start of the text. */
export const SPOKEN_PART_CAPTION = "🔊 Spoken: the first part only; the full answer is above.";

/** True when the message itself carried a voice note or audio (auto: a voice note is answered with voice). */
export function askedByVoice(message: InboundMessage): boolean {
  return (message.attachments ?? []).some((a) => !a.fromReply && attachmentKind(a) === "audio");
}

/** Whether an answer to `message` is spoken under the chat's /voice mode (absent: auto). */
export function wantsSpokenAnswer(mode: VoiceMode | undefined, message: InboundMessage): boolean {
  const chosen = mode ?? DEFAULT_VOICE_MODE;
  return chosen === "auto" ? askedByVoice(message) : chosen === "on";
}

/** The answer as words to say: Markdown marks, code and link targets left out. */
export function speakableText(markdown: string): string {
  return markdown
    .replace(/```[\s\S]*?```/g, " ")
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/https?:\/\/\S+/g, " ")
    .replace(/[*_`#>|~]+/g, "")
    .replace(/\s+/g, " ")
    .trim();
}

/** The start of `text` within `max` characters, cut after a sentence when one ends in its second half. */
export function boundedSpeech(text: string, max: number): { text: string; cut: boolean } {
  if (text.length <= max) return { text, cut: false };
  const head = text.slice(0, max);
  const end = Math.max(head.lastIndexOf(". "), head.lastIndexOf("! "), head.lastIndexOf("? "));
  return {
    text: end > max / 2 ? head.slice(0, end + 1) : `${head.slice(0, head.lastIndexOf(" ") + 1 || max).trim()}…`,
    cut: true,
  };
}

/** Speaks `answer` to the chat as a voice message; returns the message id, or undefined when nothing was sent. */
export async function speakAnswer(
  deps: SpokenAnswers,
  port: ReplyPort,
  answer: string,
  signal?: AbortSignal,
): Promise<string | undefined> {
  if (!port.sendVoice) return undefined;
  const words = speakableText(answer);
  if (words === "") return undefined;
  const spoken = boundedSpeech(words, deps.maxChars ?? 600);
  try {
    const bytes = await deps.synthesiser.speak(spoken.text, signal ? { signal } : {});
    // The server's file is checked before it is sent: a broken one would play as nothing.
    const { durationSeconds } = readOggAudio(bytes);
    return await port.sendVoice(
      {
        bytes,
        durationSeconds,
        waveform: opusWaveform(bytes),
        ...(spoken.cut ? { caption: SPOKEN_PART_CAPTION } : {}),
      },
      signal ? { signal } : {},
    );
  } catch (error) {
    if (signal?.aborted) return undefined;
    deps.logger.warn({ err: error }, "spoken answer failed; the text answer stands");
    return undefined;
  }
}
