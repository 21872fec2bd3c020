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
});
