/**
 * The Discord reply port against the fake Discord over real HTTP: what lands in the channel,
 * who gets pinged, how limits and 429s surface. No gateway connection is involved, as in a worker.
 */
import { afterEach, beforeAll, beforeEach, describe, expect, onTestFinished, test, vi } from "vitest";
import {
  createDiscordReplyPortFactory,
  type DiscordReplyPortFactory,
} from "../../../src/bots/discord/discord-reply-port.js";
import {
  createDiscordRestClient,
  DiscordApiError,
  type DiscordRestClient,
} from "../../../src/bots/discord/discord-rest-client.js";
import {
  RateLimitedError,
  RejectedContentError,
  type ReplyPort,
  type SpokenAudio,
} from "../../../src/contracts/reply-port.js";
import { readOggAudio } from "../../../src/voice/ogg-audio.js";
import { opusWaveform } from "../../../src/voice/ogg-waveform.js";
import { voiceNote } from "../../support/voice-notes.js";
import type { InboundMessage } from "../../../src/contracts/inbound-message.js";
import { startFakeDiscord, type FakeDiscord } from "../../fakes/discord-server.js";
import { inboundMessage } from "../../support/inbound-message.js";

let discord: FakeDiscord;
let rest: DiscordRestClient;
let factory: DiscordReplyPortFactory;

/** A question from Alice in #general, as the adapter would have queued it. */
function question(channelId: string, text = "what's up?"): InboundMessage {
  const said = discord.userSays({ channelId, content: text, mentionsBot: true });
  return inboundMessage({
    platform: "discord",
    chatId: channelId,
    messageId: said.id,
    chatType: "group",
    guildId: discord.ids.guild,
    author: { id: discord.users.alice.id, displayName: "Alice" },
    text,
  });
}

async function start(options: Parameters<typeof startFakeDiscord>[0] = {}): Promise<void> {
  discord = await startFakeDiscord(options);
  rest = createDiscordRestClient({ token: discord.token, apiBase: discord.apiBase });
  factory = createDiscordReplyPortFactory({ rest });
}

afterEach(async () => {
  await discord.close();
});

describe("send and edit", () => {
  let port: ReplyPort;
  let asked: InboundMessage;
  beforeEach(async () => {
    await start();
    asked = question(discord.ids.general);
    port = factory(asked);
  });

  test("the first message replies to the question, pings nobody, and shows a Stop button while not final", async () => {
    const id = await port.send(port.format("Thinking…"), { final: false });

    const [shown] = discord.botMessages(discord.ids.general);
    expect(shown?.id).toBe(id);
    expect(shown?.content).toBe("Thinking…");
    expect(shown?.message_reference?.message_id).toBe(asked.messageId);
    expect(shown?.mentions).toEqual([]); // the replied-to author was not pinged
    expect(shown?.components?.length).toBe(1);
    const post = discord.requests.find((r) => r.route === "POST /channels/:id/messages");
    expect(post?.allowedMentions).toEqual({ parse: [], replied_user: false });
    expect(post?.messageReference).toMatchObject({ message_id: asked.messageId, fail_if_not_exists: false });
  });

  test("continuations do not reference the question; edits carry allowed_mentions and final clears the button", async () => {
    const first = await port.send(port.format("part one"), { final: false });
    await port.edit(first, port.format("part one, done"), { final: true });
    await port.send(port.format("part two"), { continuation: true, final: true });

    const [one, two] = discord.botMessages(discord.ids.general);
    expect(one?.content).toBe("part one, done");
    expect(one?.edited_timestamp).not.toBeNull();
    expect(one?.components).toEqual([]);
    expect(two?.message_reference).toBeUndefined();
    const writes = discord.requests.filter((r) => r.route.includes("/messages") && r.method !== "GET");
    expect(
      writes.every((r) => JSON.stringify(r.allowedMentions) === JSON.stringify({ parse: [], replied_user: false })),
    ).toBe(true);
  });

  test("model output with @everyone, @here, a role and a user mention pings no one", async () => {
    const { moderators } = discord.world.roles;
    const text = `@everyone look! @here too, <@&${moderators.id}> and <@${discord.users.bob.id}>`;
    const id = await port.send(port.format(text), { final: false });
    await port.edit(id, port.format(`${text} (edited)`), { final: true });

    expect(discord.pings.filter((p) => p.authorId === discord.bot.id)).toEqual([]);
    const [shown] = discord.botMessages(discord.ids.general);
    expect(shown?.mention_everyone).toBe(false);
    expect(shown?.mention_roles).toEqual([]);
  });

  test("the fake would have pinged: the same text without allowed_mentions notifies @everyone", async () => {
    // Guards the test above: it passes because of the port, not because the fake never pings.
    await rest.request("POST", `/channels/${discord.ids.general}/messages`, { body: { content: "@everyone look!" } });
    expect(discord.pings.at(-1)?.everyone).toBe(true);
  });

  test("2000 characters fit; 2001 are refused as content (retrying the same text cannot help)", async () => {
    expect(port.limits.maxLength).toBe(2000);
    const id = await port.send({ text: "a".repeat(2000) }, { final: true });
    expect(discord.botMessages(discord.ids.general)[0]?.content.length).toBe(2000);

    await expect(port.edit(id, { text: "a".repeat(2001) }, { final: true })).rejects.toBeInstanceOf(
      RejectedContentError,
    );
    await expect(port.send({ text: "b".repeat(2001) }, { continuation: true })).rejects.toBeInstanceOf(
      RejectedContentError,
    );
    expect(discord.requests.filter((r) => r.status === 400).length).toBe(2);
  });

  test("a blank text still produces a valid message (Discord refuses empty ones)", async () => {
    await port.send(port.format("   "), { final: false });
    expect(discord.botMessages(discord.ids.general)[0]?.content).toBe("…");
  });

  test("editing a message someone deleted is a content rejection, not a retryable failure", async () => {
    const id = await port.send(port.format("soon gone"), { final: false });
    discord.deleteMessage(discord.ids.general, id);
    await expect(port.edit(id, port.format("edit"), { final: true })).rejects.toBeInstanceOf(RejectedContentError);
  });

  test("a 5xx stays a transient DiscordApiError", async () => {
    discord.failNext({ route: "POST /channels/:id/messages", status: 502 });
    const error = await port.send(port.format("hi"), {}).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DiscordApiError);
    expect((error as DiscordApiError).transient).toBe(true);
  });

  test("typing shows the indicator and never fails the reply", async () => {
    await port.typing?.({});
    expect(discord.typing.map((t) => t.channelId)).toEqual([discord.ids.general]);
    discord.failNext({ route: "POST /channels/:id/typing", status: 500 });
    await expect(port.typing?.({})).resolves.toBeUndefined();
  });

  test("an aborted signal cancels the request", async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(port.send(port.format("hi"), { signal: controller.signal })).rejects.toThrow(/abort/i);
    expect(discord.botMessages(discord.ids.general)).toEqual([]);
  });
});

describe("rate limits", () => {
  test("a 429 becomes RateLimitedError with Discord's exact retry_after", async () => {
    await start();
    const port = factory(question(discord.ids.general));
    const id = await port.send(port.format("one"), { final: false });
    discord.failNext({ route: "PATCH /channels/:id/messages/:id", status: 429, retryAfterMs: 2500 });

    const error = await port.edit(id, port.format("two"), { final: false }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RateLimitedError);
    // The Retry-After header says 3 (rounded up); the body's retry_after says 2.5 s.
    expect((error as RateLimitedError).retryAfterMs).toBe(2500);
  });

  test("exceeding 5 writes per 5 s: the server's 429 is honoured, and the next one is refused before it is sent", async () => {
    await start();
    const asked = question(discord.ids.general);
    // A second client stands for another worker process sharing the bucket.
    const other = createDiscordReplyPortFactory({
      rest: createDiscordRestClient({ token: discord.token, apiBase: discord.apiBase }),
    })(asked);
    // This worker has written into the channel before: REST knows the bucket's hash (a client's very first
    // request to a bucket cannot know it, and REST starts the hash's own bookkeeping from the next one).
    const port = factory(asked);
    await port.send(port.format("m0"), { continuation: true });
    for (let i = 1; i < 5; i++) await other.send(other.format(`m${i}`), { continuation: true });

    const first = await port.send(port.format("sixth"), {}).catch((e: unknown) => e);
    expect(first).toBeInstanceOf(RateLimitedError);
    const waitMs = (first as RateLimitedError).retryAfterMs;
    expect(waitMs).toBeGreaterThan(3000);
    expect(waitMs).toBeLessThanOrEqual(5000);
    expect(discord.violations).toHaveLength(1);

    // Now the port knows the bucket is empty: it refuses locally instead of earning a second 429.
    const second = await port.send(port.format("seventh"), {}).catch((e: unknown) => e);
    expect(second).toBeInstanceOf(RateLimitedError);
    expect(discord.violations).toHaveLength(1);
    expect(discord.botMessages(discord.ids.general)).toHaveLength(5);
  });

  test("the edit interval is read from X-RateLimit-* headers, not hard-coded", async () => {
    await start({ messageWriteLimit: { limit: 4, windowMs: 2000 } });
    const port = factory(question(discord.ids.general));
    expect(factory.observedIntervalMs(discord.ids.general)).toBeUndefined();
    expect(port.limits.minEditIntervalMs).toBe(1000); // Discord's documented 5 per 5 s until told otherwise

    await port.send(port.format("hello"), {});
    expect(factory.observedIntervalMs(discord.ids.general)).toBe(500);
    expect(port.limits.minEditIntervalMs).toBe(500);
  });

  test("writes paced at the advertised interval never hit the limit", async () => {
    // One faked Date for the fake's buckets and REST's: pacing without sleeping (timers stay real, HTTP runs).
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.UTC(2025, 0, 1));
    onTestFinished(() => {
      vi.useRealTimers();
    });
    discord = await startFakeDiscord({ now: () => Date.now() });
    factory = createDiscordReplyPortFactory({
      rest: createDiscordRestClient({ token: discord.token, apiBase: discord.apiBase }),
    });
    const port = factory(question(discord.ids.general));
    const id = await port.send(port.format("0"), { final: false });
    for (let i = 1; i <= 12; i++) {
      vi.setSystemTime(Date.now() + port.limits.minEditIntervalMs);
      await port.edit(id, port.format(String(i)), { final: i === 12 });
    }
    expect(port.limits.minEditIntervalMs).toBe(1000);
    expect(discord.violations).toEqual([]);
    expect(discord.botMessages(discord.ids.general)[0]?.content).toBe("12");
  });
});

describe("spoken answers", () => {
  let note: Buffer;
  let spoken: SpokenAudio;
  beforeAll(async () => {
    note = await voiceNote({ seconds: 1.2, silenceAfter: 0.8 });
    spoken = {
      bytes: note,
      durationSeconds: readOggAudio(note).durationSeconds,
      waveform: opusWaveform(note),
    };
  });

  test("go out as a voice message: one OGG/Opus file, IS_VOICE_MESSAGE, its duration and waveform, replying to the question", async () => {
    await start();
    const asked = question(discord.ids.general);
    const id = await factory(asked).sendVoice!(spoken, {});

    const post = discord.requests.find((r) => r.route === "POST /channels/:id/messages" && r.files);
    expect(post?.status).toBe(200);
    expect(post?.files).toEqual([
      { index: 0, filename: "voice-message.ogg", contentType: "audio/ogg", size: note.length },
    ]);
    expect(post?.body).toMatchObject({ flags: 8192, allowed_mentions: { parse: [], replied_user: false } });
    const [shown] = discord.botMessages(discord.ids.general);
    expect(shown?.id).toBe(id);
    expect(shown?.content).toBe("");
    expect(shown?.flags).toBe(8192);
    expect(shown?.message_reference?.message_id).toBe(asked.messageId);
    const [file] = shown?.attachments ?? [];
    expect(file?.duration_secs).toBeCloseTo(2, 1);
    expect(Buffer.from(file?.waveform ?? "", "base64")).toEqual(Buffer.from(spoken.waveform));
    // What Discord serves is the very file, and it plays for as long as it says.
    const served = Buffer.from(await (await fetch(file!.url)).arrayBuffer());
    expect(served.equals(note)).toBe(true);
    expect(readOggAudio(served).durationSeconds).toBeCloseTo(file?.duration_secs ?? 0, 1);
  });

  test("a partial answer's caption follows the voice message as a line of its own", async () => {
    await start();
    await factory(question(discord.ids.general)).sendVoice!({ ...spoken, caption: "🔊 first part only" }, {});
    const [voice, caption] = discord.botMessages(discord.ids.general);
    expect(voice?.flags).toBe(8192);
    expect(caption?.content).toBe("🔊 first part only");
    expect(caption?.attachments).toEqual([]);
  });

  test("refused as a voice message (no permission), it goes out as a plain audio file with the caption", async () => {
    await start();
    discord.denyVoiceMessages(discord.ids.general);
    await factory(question(discord.ids.general)).sendVoice!({ ...spoken, caption: "🔊 first part only" }, {});
    const posts = discord.requests.filter((r) => r.files);
    expect(posts.map((r) => r.status)).toEqual([403, 200]);
    const [shown] = discord.botMessages(discord.ids.general);
    expect(shown?.flags ?? 0).not.toBe(8192);
    expect(shown?.content).toBe("🔊 first part only");
    expect(shown?.attachments.map((a) => [a.filename, a.content_type])).toEqual([["answer.ogg", "audio/ogg"]]);
  });

  test("too large for Discord (413) and refused again as a file: the error reaches the caller, nothing is posted", async () => {
    await start({ uploadLimitBytes: 1024 });
    const sending = factory(question(discord.ids.general)).sendVoice!(spoken, {});
    await expect(sending).rejects.toMatchObject({ name: "DiscordApiError", status: 413, code: 40005 });
    expect(discord.requests.filter((r) => r.files || r.status === 413).map((r) => r.status)).toEqual([413, 413]);
    expect(discord.botMessages(discord.ids.general)).toEqual([]);
  });

  test("a channel whose write budget is spent (429) is waited out once, then the voice message goes out", async () => {
    await start();
    const asked = question(discord.ids.general);
    discord.failNext({ route: "POST /channels/:id/messages", status: 429, retryAfterMs: 300 });
    await factory(asked).sendVoice!(spoken, {});
    expect(discord.requests.filter((r) => r.files).map((r) => r.status)).toEqual([429, 200]);
    expect(discord.botMessages(discord.ids.general).map((m) => m.flags)).toEqual([8192]);
  });

  test("the fake refuses a voice message the way Discord does: text beside it, no metadata, a waveform over 256 bytes", async () => {
    await start();
    const channel = discord.ids.general;
    const send = (body: object) =>
      rest.request("POST", `/channels/${channel}/messages`, {
        body,
        files: [{ name: "voice-message.ogg", data: note, contentType: "audio/ogg" }],
      });
    const meta = { id: "0", filename: "voice-message.ogg", duration_secs: 2, waveform: "AAAA" };
    await expect(send({ flags: 8192, content: "hi", attachments: [meta] })).rejects.toMatchObject({ code: 50159 });
    await expect(send({ flags: 8192, attachments: [{ id: "0" }] })).rejects.toMatchObject({ code: 50161 });
    const long = Buffer.alloc(257, 1).toString("base64");
    await expect(send({ flags: 8192, attachments: [{ ...meta, waveform: long }] })).rejects.toMatchObject({
      code: 50161,
    });
    await expect(send({ flags: 8192, attachments: [{ ...meta, id: "3" }] })).rejects.toMatchObject({ code: 50035 });
    expect(discord.botMessages(channel)).toEqual([]);
  });
});
