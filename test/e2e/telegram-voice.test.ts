/**
 * Voice notes from Telegram, end to end: real OGG/Opus notes (made by ffmpeg in the set-up) sent
 * through the fake Bot API (voice, audio, getFile, download), transcribed by the fake speech server
 * (real multipart, real decoding by ffprobe), answered by the fake model; real Redis, bots + worker.
 * The model reads the transcript, the user sees it first, the history keeps text only, and every
 * kind of bad note gets one line while the conversation goes on.
 */
import { describe, expect } from "vitest";
import { privateChat, type FakeChat, type FakeUser } from "../fakes/telegram-server.js";
import { textAnswer } from "../fakes/openai-server.js";
import { startFakeSpeech } from "../fakes/speech-server.js";
import { e2eTest } from "../support/fixtures.js";
import { storedHistoryText } from "../support/stored-history.js";
import { voiceNote } from "../support/voice-notes.js";
import { sentHistory } from "./telegram-harness.js";
import { VOICE_NOT_SET_UP_NOTICE } from "../../src/attachments/prepare-audio.js";
import { SPOKEN_PART_CAPTION } from "../../src/answer/spoken-answer.js";
import { readOggAudio } from "../../src/voice/ogg-audio.js";

const alice: FakeUser = { id: 2001, first_name: "Alice" };
const bob: FakeUser = { id: 2002, first_name: "Bob" };
const group: FakeChat = { id: -100777, type: "supergroup", title: "Talk" };

describe("Telegram voice notes, end to end", () => {
  e2eTest(
    "a voice note is transcribed, shown, answered from its words and remembered as text for the next turn",
    async ({ startTelegram, closeAfter }) => {
      const stt = closeAfter(await startFakeSpeech());
      const e2e = await startTelegram({ env: { STT_BASE_URL: stt.baseURL, STT_MODEL: "whisper-1" } });
      const { tg, model } = e2e;
      model.script([textAnswer("Paris is the capital of France."), textAnswer("You asked about France.")]);
      const note = await voiceNote({ seconds: 2 });
      stt.hears(note, "What is the capital of France?");

      const { message } = await tg.userSendsFile(privateChat(alice), alice, {
        kind: "voice",
        bytes: note,
        duration: 2,
      });
      const reply = await tg.waitFor(
        () => tg.botMessages(alice.id).find((m) => m.text.includes("Paris is the capital of France.")),
        { timeoutMs: 15_000, what: "the answer" },
      );
      // The user sees what was heard, then the answer.
      expect(reply.text).toMatch(/^🎤 “What is the capital of France\?”\s+Paris is the capital of France\.$/);
      // The transcriber got the note as the real API takes it.
      expect(stt.transcriptions).toEqual([
        expect.objectContaining({ model: "whisper-1", responseFormat: "json", bytes: note.length, status: 200 }),
      ]);
      expect(stt.transcriptions[0]?.fileName).toBe(`voice-${message.message_id}.ogg`);
      expect(sentHistory(model.requests[0]).at(-1)).toEqual({
        role: "user",
        content: `[voice note: voice-${message.message_id}.ogg] What is the capital of France?`,
      });

      tg.userSays(privateChat(alice), alice, "what did I just ask you?");
      await tg.waitFor(() => tg.botMessages(alice.id).at(-1)?.text === "You asked about France.", {
        timeoutMs: 15_000,
        what: "the second answer",
      });
      // The second turn carries the words of the first, never its audio.
      expect(sentHistory(model.requests[1]).slice(0, 2)).toEqual([
        { role: "user", content: `[voice note: voice-${message.message_id}.ogg] What is the capital of France?` },
        { role: "assistant", content: "Paris is the capital of France." },
      ]);
      const stored = await storedHistoryText(e2e.stack.redis);
      expect(stored).toContain("What is the capital of France?");
      expect(stored).not.toMatch(/OggS|base64/);
    },
    60_000,
  );

  e2eTest(
    "in a group a voice note is answered when it replies to the bot or its caption mentions it, not otherwise",
    async ({ startTelegram, closeAfter }) => {
      const stt = closeAfter(await startFakeSpeech());
      const e2e = await startTelegram({ env: { STT_BASE_URL: stt.baseURL } });
      const { tg, model } = e2e;
      model.script([textAnswer("Tuesday works."), textAnswer("Bring snacks.")]);
      const [chatter, toBot, captioned] = await Promise.all([
        voiceNote({ frequency: 300 }),
        voiceNote({ frequency: 500 }),
        voiceNote({ frequency: 700 }),
      ]);
      stt.hears(toBot, "Can we meet on Tuesday?");
      stt.hears(captioned, "What should I bring?");

      await tg.userSendsFile(group, bob, { kind: "voice", bytes: chatter, duration: 1 });
      const earlier = tg.botSays(group.id, "When shall we meet?");
      await tg.userSendsFile(
        group,
        alice,
        { kind: "voice", bytes: toBot, duration: 1 },
        { replyTo: earlier.messageId },
      );
      await tg.waitFor(() => tg.botMessages(group.id).some((m) => m.text.includes("Tuesday works.")), {
        timeoutMs: 15_000,
        what: "the answer to the reply",
      });
      await tg.userSendsFile(group, bob, { kind: "voice", bytes: captioned, duration: 1, caption: "@test_bot" });
      await tg.waitFor(() => tg.botMessages(group.id).some((m) => m.text.includes("Bring snacks.")), {
        timeoutMs: 15_000,
        what: "the answer to the captioned note",
      });
      expect(sentHistory(model.requests[0]).at(-1)?.content).toMatch(
        /^Alice: \(replying to Test Bot: "When shall we meet\?"\)\n\[voice note: voice-\d+\.ogg\] Can we meet on Tuesday\?$/,
      );
      expect(sentHistory(model.requests[1]).at(-1)?.content).toMatch(
        /^Bob: \[voice note: voice-\d+\.ogg\] What should I bring\?$/,
      );
      // Bob's chatter was never downloaded nor transcribed.
      expect(stt.transcriptions).toHaveLength(2);
    },
    60_000,
  );

  e2eTest(
    "a 20-minute note, a damaged one, a file that is no audio, a silent one and a transcriber that is down each get one line; the chat goes on",
    async ({ startTelegram, closeAfter }) => {
      const stt = closeAfter(await startFakeSpeech());
      const e2e = await startTelegram({ env: { STT_BASE_URL: stt.baseURL } });
      const { tg, model } = e2e;
      model.setHandler(() => textAnswer("Answered."));
      const chat = privateChat(alice);
      const [long, good, silent] = await Promise.all([
        voiceNote({ seconds: 1200 }),
        voiceNote({ frequency: 600 }),
        voiceNote({ frequency: 900 }),
      ]);
      stt.hears(silent, "   ");
      const damaged = Buffer.from(good);
      damaged.fill(0x55, 200, 400);
      const cases: { send: () => Promise<unknown>; line: RegExp }[] = [
        {
          // The client declares 20 minutes: refused before any download.
          send: () => tg.userSendsFile(chat, alice, { kind: "voice", bytes: long, duration: 1200 }),
          line: /^🎤 voice-\d+\.ogg is 20:00 long; I transcribe up to 5:00\. Please send a shorter note or type it\.$/,
        },
        {
          // A client that lies about the length: the file's own pages tell.
          send: () => tg.userSendsFile(chat, alice, { kind: "voice", bytes: long, duration: 3 }),
          line: /^🎤 voice-\d+\.ogg is 20:00 long; I transcribe up to 5:00\./,
        },
        {
          send: () => tg.userSendsFile(chat, alice, { kind: "voice", bytes: damaged, duration: 1 }),
          line: /^🎤 voice-\d+\.ogg could not be read as audio \(OGG page checksum mismatch\)\. Please record it again\.$/,
        },
        {
          send: () =>
            tg.userSendsFile(chat, alice, {
              kind: "audio",
              bytes: Buffer.from("ID3 these are the lyrics, not the song\n".repeat(20)),
              duration: 30,
              fileName: "song.mp3",
            }),
          line: /^🎤 song\.mp3 is not audio I can transcribe\. Send a voice message or type it\.$/,
        },
        {
          send: () => tg.userSendsFile(chat, alice, { kind: "voice", bytes: silent, duration: 1 }),
          line: /^🎤 I heard no words in voice-\d+\.ogg\.$/,
        },
        {
          send: async () => {
            await stt.down();
            return tg.userSendsFile(chat, alice, { kind: "voice", bytes: good, duration: 1 });
          },
          line: /^🎤 The transcriber did not answer, so I could not listen to voice-\d+\.ogg\. Please try again later or type it\.$/,
        },
      ];
      for (const [i, c] of cases.entries()) {
        await c.send();
        const reply = await tg.waitFor(() => tg.botMessages(alice.id)[i], {
          timeoutMs: 20_000,
          what: `the line for case ${i}`,
        });
        expect(reply.text).toMatch(c.line);
      }
      // None of them reached the model; the 20-minute notes never reached the transcriber.
      expect(model.requests).toHaveLength(0);
      expect(stt.transcriptions.map((t) => t.status)).toEqual([400, 200]);
      tg.userSays(chat, alice, "still there?");
      await tg.waitFor(() => tg.botMessages(alice.id)[cases.length]?.text === "Answered.", {
        timeoutMs: 15_000,
        what: "an answer after the refusals",
      });
      // The model sees the refused notes as lines of text in the history, no audio.
      expect(JSON.stringify(sentHistory(model.requests[0]))).toContain("(too long to transcribe)");
    },
    120_000,
  );

  e2eTest("without a transcriber a voice note gets one line saying how voice is set up", async ({ startTelegram }) => {
    const e2e = await startTelegram();
    const { tg, model } = e2e;
    await tg.userSendsFile(privateChat(alice), alice, { kind: "voice", bytes: await voiceNote(), duration: 1 });
    const reply = await tg.waitFor(() => tg.botMessages(alice.id)[0], { timeoutMs: 15_000, what: "the line" });
    expect(reply.text).toBe(VOICE_NOT_SET_UP_NOTICE.replace(/`/g, ""));
    expect(model.requests).toHaveLength(0);
    expect(tg.files.downloads).toEqual([]);
  });

  e2eTest(
    "with TTS on, a voice note's answer also comes back as a playable OGG/Opus voice message; a long one is spoken in part",
    async ({ startTelegram, closeAfter }) => {
      const speech = closeAfter(await startFakeSpeech());
      const e2e = await startTelegram({
        env: { STT_BASE_URL: speech.baseURL, TTS_BASE_URL: speech.baseURL, TTS_VOICE: "af_bella" },
      });
      const { tg, model } = e2e;
      const long = `${"Rome was not built in a day. ".repeat(40)}The end.`;
      model.script([
        textAnswer("**Paris** is the capital of France."),
        textAnswer("Typed answers stay text."),
        textAnswer(long),
      ]);
      const chat = privateChat(alice);
      const [first, second] = await Promise.all([voiceNote({ frequency: 410 }), voiceNote({ frequency: 820 })]);
      speech.hears(first, "What is the capital of France?");
      speech.hears(second, "Tell me about Rome.");

      const { message } = await tg.userSendsFile(chat, alice, { kind: "voice", bytes: first, duration: 2 });
      await tg.waitFor(() => tg.files.sentVoices.length === 1, { timeoutMs: 20_000, what: "the spoken answer" });
      const voice = tg.files.sentVoices[0];
      const made = speech.speech[0];
      expect(made).toMatchObject({
        input: "Paris is the capital of France.",
        voice: "af_bella",
        responseFormat: "opus",
      });
      // What reached the chat plays as OGG/Opus for as long as the speech server made it.
      const played = readOggAudio(voice?.bytes ?? Buffer.alloc(0));
      expect(played.codec).toBe("opus");
      expect(played.durationSeconds).toBeCloseTo(made?.seconds ?? 0, 1);
      expect(voice?.duration).toBe(Math.max(1, Math.round(made?.seconds ?? 0)));
      expect(tg.botMessages(alice.id)[0]?.text).toContain("Paris is the capital of France.");
      expect(tg.botMessages(alice.id)[1]?.replyToMessageId).toBe(message.message_id);

      // A typed question is answered in text only (auto: voice answers voice).
      tg.userSays(chat, alice, "and in writing?");
      await tg.waitFor(() => tg.botMessages(alice.id).some((m) => m.text === "Typed answers stay text."), {
        timeoutMs: 15_000,
        what: "the typed answer",
      });
      await tg.userSendsFile(chat, alice, { kind: "voice", bytes: second, duration: 2 });
      await tg.waitFor(() => tg.files.sentVoices.length === 2, { timeoutMs: 30_000, what: "the second spoken answer" });
      expect(speech.speech).toHaveLength(2);
      const part = speech.speech[1]?.input ?? "";
      expect(part.length).toBeLessThanOrEqual(600);
      expect(long.startsWith(part)).toBe(true);
      expect(part.endsWith("day.")).toBe(true);
      expect(tg.files.sentVoices[1]?.caption).toBe(SPOKEN_PART_CAPTION);
    },
    90_000,
  );

  e2eTest(
    "/voice: in the menu, admin-only in a group; off keeps a voice note's answer text, on speaks a typed question",
    async ({ startTelegram, closeAfter }) => {
      const speech = closeAfter(await startFakeSpeech());
      const e2e = await startTelegram({ env: { STT_BASE_URL: speech.baseURL, TTS_BASE_URL: speech.baseURL } });
      const { tg, model } = e2e;
      expect(tg.registeredCommands()).toContainEqual({
        command: "voice",
        description: "Spoken answers: off, on or auto",
      });
      tg.addChat(group);
      tg.setMemberStatus(group.id, bob, "member");
      tg.userSays(group, bob, "/voice@test_bot off");
      await tg.waitFor(() => tg.botMessages(group.id)[0], { timeoutMs: 15_000, what: "the refusal" });
      expect(tg.botMessages(group.id)[0]?.text).toBe(
        "🔒 Only admins of this chat can change its settings. Anyone can look with /settings.",
      );

      model.script([textAnswer("Answered in writing."), textAnswer("Spoken as well.")]);
      const chat = privateChat(alice);
      tg.userSays(chat, alice, "/voice");
      const shown = await tg.waitFor(() => tg.botMessages(alice.id)[0], { timeoutMs: 15_000, what: "/voice" });
      expect(shown.text).toContain("Spoken answers here: auto (default): a voice note is answered with voice too.");
      tg.userSays(chat, alice, "/voice off");
      await tg.waitFor(() => tg.botMessages(alice.id)[1]?.text.includes("✅ Spoken answers are now off here."), {
        timeoutMs: 15_000,
        what: "/voice off",
      });
      const note = await voiceNote({ frequency: 640 });
      speech.hears(note, "Can you hear me?");
      await tg.userSendsFile(chat, alice, { kind: "voice", bytes: note, duration: 2 });
      await tg.waitFor(() => tg.botMessages(alice.id).some((m) => m.text.endsWith("Answered in writing.")), {
        timeoutMs: 20_000,
        what: "the text answer",
      });

      tg.userSays(chat, alice, "/voice on");
      await tg.waitFor(
        () => tg.botMessages(alice.id).some((m) => m.text.includes("✅ Spoken answers are now on here.")),
        {
          timeoutMs: 15_000,
          what: "/voice on",
        },
      );
      tg.userSays(chat, alice, "and now in writing?");
      await tg.waitFor(() => tg.files.sentVoices.length === 1, { timeoutMs: 20_000, what: "the spoken answer" });
      // Only the typed question's answer was spoken: the voice note under /voice off was not.
      expect(speech.speech.map((s) => s.input)).toEqual(["Spoken as well."]);
      expect(readOggAudio(tg.files.sentVoices[0]?.bytes ?? Buffer.alloc(0)).durationSeconds).toBeCloseTo(
        speech.speech[0]?.seconds ?? 0,
        1,
      );
    },
    90_000,
  );
});
