/**
 * Voice messages from Discord, end to end (the real discord.js client against the fake Discord,
 * whose voice messages carry the IS_VOICE_MESSAGE flag, `duration_secs` and a waveform, served from
 * its signed CDN; the fake speech server transcribing real OGG/Opus): the model reads the
 * transcript, the user sees it first, and the next turn can refer to what was said.
 */
import { describe, expect } from "vitest";
import { textAnswer } from "../fakes/openai-server.js";
import { startFakeSpeech } from "../fakes/speech-server.js";
import { botAnswer } from "./discord-harness.js";
import { e2eTest } from "../support/fixtures.js";
import { storedHistoryText } from "../support/stored-history.js";
import { voiceNote } from "../support/voice-notes.js";
import { sentHistory } from "./telegram-harness.js";
import type { APIMessage } from "discord.js";
import type { FakeDiscord } from "../fakes/discord-server.js";
import { SPOKEN_PART_CAPTION } from "../../src/answer/spoken-answer.js";
import { readOggAudio } from "../../src/voice/ogg-audio.js";
import { waveformSamplesFor } from "../../src/voice/ogg-waveform.js";

/** The bot's voice messages in a channel (IS_VOICE_MESSAGE), oldest first. */
const voiceMessages = (discord: FakeDiscord, channelId: string): APIMessage[] =>
  discord.botMessages(channelId).filter((m) => ((m.flags ?? 0) & 8192) !== 0);

/** Runs a slash command as Alice and returns the text of the bot's response. */
async function slash(discord: FakeDiscord, channelId: string, name: string, value: string): Promise<string> {
  const { id } = discord.runCommand({ channelId, name, options: [{ name: "mode", value }] });
  const response = await discord.waitFor(() => discord.interactionResponses.find((r) => r.interactionId === id), {
    label: `the response to /${name} ${value}`,
  });
  return String(response.data?.content ?? "");
}

const options = { discord: { messageWriteLimit: { limit: 5, windowMs: 500 } } };

describe("Discord voice messages, end to end", () => {
  e2eTest(
    "a voice message in a DM is transcribed, shown and answered; the next turn remembers its words",
    async ({ startDiscord, closeAfter }) => {
      const stt = closeAfter(await startFakeSpeech());
      const e2e = await startDiscord({ ...options, env: { STT_BASE_URL: stt.baseURL } });
      const { discord, model } = e2e;
      const dm = discord.ids.dm;
      model.script([textAnswer("It is 42."), textAnswer("You asked for the answer to everything.")]);
      const note = await voiceNote({ seconds: 2 });
      stt.hears(note, "What is the answer to everything?");

      await discord.userSendsVoice({ channelId: dm, bytes: note, durationSecs: 2.04 });
      const answer = await botAnswer(discord, dm, (c) => c.includes("It is 42."), { timeoutMs: 20_000 });
      expect(answer.content).toMatch(/^🎤 “What is the answer to everything\?”\s+It is 42\.$/);
      expect(sentHistory(model.requests[0]).at(-1)).toEqual({
        role: "user",
        content: "[voice note: voice-message.ogg] What is the answer to everything?",
      });
      expect(stt.transcriptions).toEqual([
        expect.objectContaining({ fileName: "voice-message.ogg", fileType: "audio/ogg", status: 200 }),
      ]);

      discord.userSays({ channelId: dm, content: "what did I ask?" });
      await botAnswer(discord, dm, (c) => c === "You asked for the answer to everything.", { timeoutMs: 20_000 });
      expect(sentHistory(model.requests[1])[0]?.content).toBe(
        "[voice note: voice-message.ogg] What is the answer to everything?",
      );
      expect(await storedHistoryText(e2e.stack.redis)).not.toMatch(/OggS|base64/);
    },
    60_000,
  );

  e2eTest(
    "in a channel a voice message replying to the bot is answered; a 20-minute one gets one line before any download",
    async ({ startDiscord, closeAfter }) => {
      const stt = closeAfter(await startFakeSpeech());
      const e2e = await startDiscord({ ...options, env: { STT_BASE_URL: stt.baseURL } });
      const { discord, model } = e2e;
      const channel = discord.ids.general;
      const note = await voiceNote({ frequency: 520 });
      stt.hears(note, "Remind me to buy milk");

      discord.userSays({ channelId: channel, content: "hello there", mentionsBot: true });
      model.script([textAnswer("Hello!"), textAnswer("Noted: buy milk.")]);
      const hello = await botAnswer(discord, channel, (c) => c === "Hello!", { timeoutMs: 20_000 });
      // Someone else's voice message, addressed to nobody: ignored.
      await discord.userSendsVoice({ channelId: channel, author: discord.users.bob, bytes: note, durationSecs: 1.5 });
      await discord.userSendsVoice({ channelId: channel, bytes: note, durationSecs: 1.5, replyTo: hello.id });
      await botAnswer(discord, channel, (c) => c.includes("Noted: buy milk."), { timeoutMs: 20_000 });
      expect(sentHistory(model.requests[1]).at(-1)?.content).toMatch(
        /^Alice: \(replying to .+: "Hello!"\)\n\[voice note: voice-message\.ogg\] Remind me to buy milk$/,
      );
      expect(stt.transcriptions).toHaveLength(1);

      await discord.userSendsVoice({ channelId: channel, bytes: note, durationSecs: 1200, replyTo: hello.id });
      const refusal = await botAnswer(discord, channel, (c) => c.startsWith("🎤 voice-message.ogg is 20:00 long"), {
        timeoutMs: 20_000,
      });
      expect(refusal.content).toBe(
        "🎤 voice-message.ogg is 20:00 long; I transcribe up to 5:00. Please send a shorter note or type it.",
      );
      expect(discord.attachmentDownloads).toHaveLength(1);
      expect(model.requests).toHaveLength(2);
    },
    60_000,
  );

  e2eTest(
    "with TTS on, the answer to a voice message comes back as a Discord voice message; /voice off keeps answers text, /voice on speaks a typed question",
    async ({ startDiscord, closeAfter }) => {
      const speech = closeAfter(await startFakeSpeech());
      const e2e = await startDiscord({
        ...options,
        env: { STT_BASE_URL: speech.baseURL, TTS_BASE_URL: speech.baseURL, TTS_VOICE: "af_bella" },
      });
      const { discord, model } = e2e;
      const dm = discord.ids.dm;
      const long = `${"Rome was not built in a day. ".repeat(40)}The end.`;
      model.script([textAnswer("**Paris** is the capital of France."), textAnswer("Still text."), textAnswer(long)]);
      const [first, second] = await Promise.all([voiceNote({ frequency: 410 }), voiceNote({ frequency: 820 })]);
      speech.hears(first, "What is the capital of France?");
      speech.hears(second, "And now?");

      // auto (the default): a voice message is answered in text, then aloud.
      const asked = await discord.userSendsVoice({ channelId: dm, bytes: first, durationSecs: 1.5 });
      const [voice] = await discord.waitFor(
        () => voiceMessages(discord, dm).length === 1 && voiceMessages(discord, dm),
        {
          timeoutMs: 20_000,
          label: "the spoken answer",
        },
      );
      const [text] = discord.botMessages(dm);
      expect(text?.content).toMatch(
        /^🎤 “What is the capital of France\?”\s+\*\*Paris\*\* is the capital of France\.$/,
      );
      expect(discord.botMessages(dm).indexOf(voice!)).toBeGreaterThan(discord.botMessages(dm).indexOf(text!));
      const made = speech.speech[0];
      expect(made).toMatchObject({
        input: "Paris is the capital of France.",
        voice: "af_bella",
        responseFormat: "opus",
      });
      expect(voice?.content).toBe("");
      expect(voice?.message_reference?.message_id).toBe(asked.id);
      const [file] = voice?.attachments ?? [];
      expect(file).toMatchObject({ filename: "voice-message.ogg", content_type: "audio/ogg" });
      // The file Discord serves plays as OGG/Opus for as long as the speech server made it, and says so.
      const played = readOggAudio(Buffer.from(await (await fetch(file!.url)).arrayBuffer()));
      expect(played.codec).toBe("opus");
      expect(played.durationSeconds).toBeCloseTo(made?.seconds ?? 0, 1);
      expect(file?.duration_secs).toBeCloseTo(played.durationSeconds, 1);
      expect(Buffer.from(file?.waveform ?? "", "base64")).toHaveLength(waveformSamplesFor(played.durationSeconds));

      // /voice off: the next voice message is answered in text only.
      expect(await slash(discord, dm, "voice", "off")).toContain("✅ Spoken answers are now off here.");
      await discord.userSendsVoice({ channelId: dm, bytes: second, durationSecs: 1.5 });
      // (The /voice answers carry buttons, so this waits on the answer itself, not on every message being final.)
      await discord.waitFor(
        () => discord.botMessages(dm).some((m) => m.content.endsWith("Still text.") && !m.components?.length),
        { timeoutMs: 20_000, label: "the text-only answer" },
      );

      // /voice on: a typed question is spoken too; a long answer is spoken in part, and a line says so.
      expect(await slash(discord, dm, "voice", "on")).toContain("every answer is also spoken");
      discord.userSays({ channelId: dm, content: "tell me about Rome" });
      await discord.waitFor(() => discord.botMessages(dm).at(-1)?.content === SPOKEN_PART_CAPTION, {
        timeoutMs: 30_000,
        label: "the caption after the second spoken answer",
      });
      expect(voiceMessages(discord, dm)).toHaveLength(2);
      expect(speech.speech).toHaveLength(2);
      const part = speech.speech[1]?.input ?? "";
      expect(part.length).toBeLessThanOrEqual(600);
      expect(part.endsWith("day.")).toBe(true);
      expect(long.startsWith(part)).toBe(true);
    },
    90_000,
  );
});
