/**
 * The Discord adapter with the real discord.js client logged into the fake Discord, and a
 * recording BotGateway standing in for the queue: what gets enqueued, what is ignored, and
 * what users see for commands, refusals and the Stop button.
 */
import { afterEach, describe, expect, test, vi } from "vitest";
import { MessageType } from "discord.js";
import {
  createDiscordAdapter,
  DISCORD_CACHED_MESSAGES_PER_CHANNEL,
  type DiscordAdapter,
  type DiscordAdapterOptions,
} from "../../../src/bots/discord/discord-adapter.js";
import { createDiscordRestClient } from "../../../src/bots/discord/discord-rest-client.js";
import { stopButtonRow } from "../../../src/bots/discord/discord-stop-button.js";
import type { BotGateway, EnqueueResult } from "../../../src/contracts/bot-gateway.js";
import { jobIdFor, type InboundMessage } from "../../../src/contracts/inbound-message.js";
import { createDefaultWorld } from "../../fakes/discord-fixtures.js";
import { startFakeDiscord, type FakeDiscord } from "../../fakes/discord-server.js";
import { pino } from "pino";
import { logSink } from "../../support/log-sink.js";

interface RecordingGateway extends BotGateway {
  enqueued: InboundMessage[];
  resets: string[];
  stops: string[];
  /** What the next enqueue does (default: queue it). */
  nextEnqueue?: () => Promise<EnqueueResult>;
  stopAnswer: boolean;
}

function recordingGateway(): RecordingGateway {
  const gateway: RecordingGateway = {
    enqueued: [],
    resets: [],
    stops: [],
    stopAnswer: true,
    async enqueue(message) {
      const behaviour = gateway.nextEnqueue;
      gateway.nextEnqueue = undefined;
      if (behaviour) return behaviour();
      gateway.enqueued.push(message);
      return { status: "queued", jobId: jobIdFor(message) };
    },
    async reset(key) {
      gateway.resets.push(key);
    },
    async stop(key) {
      gateway.stops.push(key);
      return gateway.stopAnswer;
    },
  };
  return gateway;
}

let discord: FakeDiscord;
let adapter: DiscordAdapter | undefined;
let gateway: RecordingGateway;

async function start(overrides: Partial<DiscordAdapterOptions> = {}): Promise<void> {
  discord = await startFakeDiscord();
  gateway = recordingGateway();
  adapter = createDiscordAdapter({
    token: discord.token,
    apiBase: discord.apiBase,
    gateway,
    allowedGuilds: [],
    allowedChannels: [],
    maxInputChars: 500,
    ...overrides,
  });
  await adapter.start();
}

afterEach(async () => {
  await adapter?.stop();
  adapter = undefined;
  await discord.close();
});

/** Waits until `count` messages were enqueued and returns the last. */
async function enqueuedNumber(count: number): Promise<InboundMessage> {
  return discord.waitFor(() => (gateway.enqueued.length >= count ? gateway.enqueued[count - 1] : undefined), {
    label: `${count} enqueued message(s)`,
  });
}

/** The bot's replies in a channel once there are `count`. */
async function botReplies(channelId: string, count = 1) {
  return discord.waitFor(
    () => {
      const mine = discord.botMessages(channelId);
      return mine.length >= count ? mine : undefined;
    },
    { label: `${count} bot message(s) in ${channelId}` },
  );
}

describe("what gets enqueued", () => {
  test("a mention in a channel: mention stripped, speaker's server nickname, shared channel conversation", async () => {
    await start();
    const said = discord.userSays({
      channelId: discord.ids.general,
      author: discord.users.bob,
      content: "what's the weather in Paris?",
      mentionsBot: true,
    });

    const m = await enqueuedNumber(1);
    expect(m).toMatchObject({
      platform: "discord",
      conversationKey: `dc:${discord.ids.general}`,
      chatId: discord.ids.general,
      messageId: said.id,
      chatType: "group",
      guildId: discord.ids.guild,
      author: { id: discord.users.bob.id, displayName: "Bobby" },
      text: "what's the weather in Paris?",
      typingOnReceipt: true,
    });
    expect(m.threadId).toBeUndefined();
    expect(discord.botMessages(discord.ids.general)).toEqual([]); // the adapter only enqueues…
    // …and shows typing at once, before any worker has the question.
    await vi.waitFor(() => expect(discord.typing.map((t) => t.channelId)).toEqual([discord.ids.general]));
  });

  test("other mentions become readable names; the bot's role mention addresses it too", async () => {
    await start();
    discord.userSays({
      channelId: discord.ids.general,
      author: discord.users.carol,
      content: `<@&${discord.world.roles.botRole.id}> what did <@${discord.users.bob.id}> ask?`,
    });
    const m = await enqueuedNumber(1);
    expect(m.text).toBe("what did @Bobby ask?");
    expect(m.author.displayName).toBe("carol"); // no nickname, no global name: the username
  });

  test("a DM is always addressed and is its own conversation", async () => {
    await start();
    discord.userSays({ channelId: discord.ids.dm, author: discord.users.alice, content: "hello there" });
    const m = await enqueuedNumber(1);
    expect(m).toMatchObject({
      conversationKey: `dc:${discord.ids.dm}`,
      chatType: "private",
      author: { displayName: "Alice" },
      text: "hello there",
    });
    expect(m.guildId).toBeUndefined();
  });

  test("a thread is a conversation of its own", async () => {
    await start();
    discord.userSays({ channelId: discord.ids.thread, content: "in the thread", mentionsBot: true });
    const m = await enqueuedNumber(1);
    expect(m.conversationKey).toBe(`dc:${discord.ids.thread}`);
    expect(m.chatId).toBe(discord.ids.thread);
  });

  test("a reply to one of the bot's messages needs no mention and carries what it replies to", async () => {
    await start();
    const rest = createDiscordRestClient({ token: discord.token, apiBase: discord.apiBase });
    const answer = await rest.request<{ id: string }>("POST", `/channels/${discord.ids.general}/messages`, {
      body: { content: "It is 21°C in Paris.", allowed_mentions: { parse: [] } },
    });
    // With the client's reply ping switched off, the message mentions nobody at all.
    discord.userSays({
      channelId: discord.ids.general,
      content: "and tomorrow?",
      replyTo: answer.id,
      mentionRepliedUser: false,
    });

    const m = await enqueuedNumber(1);
    expect(m.text).toBe("and tomorrow?");
    expect(m.replyTo).toEqual({ messageId: answer.id, authorName: "testbot", text: "It is 21°C in Paris." });
  });

  test("a busy channel keeps only its last messages cached, and a reply to an older one still carries what it replies to", async () => {
    await start();
    const ch = discord.ids.general;
    const original = discord.userSays({
      channelId: ch,
      author: discord.users.bob,
      content: "which way to the harbour?",
    });
    for (let i = 0; i < 3 * DISCORD_CACHED_MESSAGES_PER_CHANNEL; i++)
      discord.userSays({ channelId: ch, author: discord.users.carol, content: `chatter ${i}` });
    discord.userSays({ channelId: ch, content: "can you answer him?", mentionsBot: true, replyTo: original.id });

    const m = await enqueuedNumber(1);
    expect(m.replyTo).toMatchObject({ messageId: original.id, text: "which way to the harbour?" });
    const channel = adapter?.client.channels.cache.get(ch);
    expect(channel?.isTextBased() && channel.messages.cache.size).toBeLessThanOrEqual(
      DISCORD_CACHED_MESSAGES_PER_CHANNEL,
    );
    expect(channel?.isTextBased() && channel.messages.cache.size).toBeGreaterThan(0);
  });

  test("unaddressed channel messages, @everyone, and replies to other people are ignored", async () => {
    await start();
    const ch = discord.ids.general;
    const bobSaid = discord.userSays({ channelId: ch, author: discord.users.bob, content: "lunch?" });
    discord.userSays({ channelId: ch, content: "just chatting" });
    discord.userSays({ channelId: ch, content: "@everyone meeting now" });
    discord.userSays({ channelId: ch, content: "sure", replyTo: bobSaid.id });
    // Messages of a channel are handled in order, so once this one is in, the others were judged.
    discord.userSays({ channelId: ch, content: "sentinel", mentionsBot: true });

    const m = await enqueuedNumber(1);
    expect(m.text).toBe("sentinel");
    expect(gateway.enqueued).toHaveLength(1);
  });

  test("bots (itself included), webhooks, system messages and empty mentions are ignored", async () => {
    await start();
    const ch = discord.ids.general;
    discord.userSays({
      channelId: ch,
      author: discord.users.otherBot,
      content: "hey bot, answer me",
      mentionsBot: true,
    });
    discord.userSays({
      channelId: ch,
      author: discord.users.alice,
      content: "from a webhook",
      mentionsBot: true,
      webhookId: "1100000000000000099",
    });
    discord.userSays({ channelId: ch, content: "", type: MessageType.UserJoin });
    discord.userSays({ channelId: ch, content: "   ", mentionsBot: true });
    const rest = createDiscordRestClient({ token: discord.token, apiBase: discord.apiBase });
    await rest.request("POST", `/channels/${ch}/messages`, {
      body: { content: `<@${discord.bot.id}> talking to myself` },
    });
    discord.userSays({ channelId: ch, content: "sentinel", mentionsBot: true });

    await enqueuedNumber(1);
    expect(gateway.enqueued.map((m) => m.text)).toEqual(["sentinel"]);
  });

  test("over-long input gets a polite refusal that pings no one, and is not queued", async () => {
    await start({ maxInputChars: 100 });
    const said = discord.userSays({ channelId: discord.ids.general, content: "x".repeat(101), mentionsBot: true });

    const [refusal] = await botReplies(discord.ids.general);
    expect(refusal?.content).toMatch(/too long.*101.*100/);
    expect(refusal?.message_reference?.message_id).toBe(said.id);
    expect(discord.pings.filter((p) => p.authorId === discord.bot.id)).toEqual([]);
    expect(gateway.enqueued).toEqual([]);
  });

  test("a refusal from the queue (e.g. the user's rate limit) is shown; a broken queue is admitted, not hidden", async () => {
    await start();
    gateway.nextEnqueue = async () => ({ status: "refused", reason: "Slow down a little: 20 messages a minute." });
    discord.userSays({ channelId: discord.ids.dm, content: "one" });
    expect((await botReplies(discord.ids.dm, 1))[0]?.content).toBe("Slow down a little: 20 messages a minute.");

    gateway.nextEnqueue = async () => {
      throw new Error("Redis is down");
    };
    discord.userSays({ channelId: discord.ids.dm, content: "two" });
    expect((await botReplies(discord.ids.dm, 2))[1]?.content).toMatch(/can't take new questions/);
    // Neither is being answered, so neither showed typing.
    expect(discord.typing).toEqual([]);
  });
});

describe("access lists", () => {
  /** A logger that keeps the adapter's lines, and a wait until it has turned away `count` messages. */
  const refusals = () => {
    const sink = logSink();
    const turnedAway = (count: number) =>
      discord.waitFor(
        () => sink.text().split("message outside the allowed guilds/channels").length - 1 >= count || undefined,
        { label: `${count} message(s) turned away` },
      );
    return { logger: pino({ level: "debug" }, sink.stream), turnedAway };
  };

  test("only listed channels are served; a thread counts as its parent", async () => {
    const { logger, turnedAway } = refusals();
    await start({ allowedChannels: [createDefaultWorld().channels.general.id], logger });

    discord.userSays({ channelId: discord.ids.random, content: "not here", mentionsBot: true });
    discord.userSays({ channelId: discord.ids.dm, content: "nor here" });
    discord.userSays({ channelId: discord.ids.thread, content: "thread ok", mentionsBot: true });
    discord.userSays({ channelId: discord.ids.general, content: "channel ok", mentionsBot: true });

    await enqueuedNumber(2);
    await turnedAway(2); // the other channels' messages were looked at, and not enqueued
    expect(gateway.enqueued.map((m) => m.text).sort()).toEqual(["channel ok", "thread ok"]);
  });

  test("with a guild list, other places and DMs are refused", async () => {
    const { logger, turnedAway } = refusals();
    await start({ allowedGuilds: [createDefaultWorld().guildId], logger });
    discord.userSays({ channelId: discord.ids.dm, content: "dm" });
    discord.userSays({ channelId: discord.ids.general, content: "guild", mentionsBot: true });
    await enqueuedNumber(1);
    await turnedAway(1);
    expect(gateway.enqueued.map((m) => m.text)).toEqual(["guild"]);
  });
});

describe("commands", () => {
  test("/reset addressed in a channel clears that channel's conversation and says so", async () => {
    await start();
    discord.userSays({ channelId: discord.ids.general, content: "/reset", mentionsBot: true });
    const [reply] = await botReplies(discord.ids.general);
    expect(gateway.resets).toEqual([`dc:${discord.ids.general}`]);
    expect(reply?.content).toMatch(/forgotten/);
    expect(gateway.enqueued).toEqual([]);
  });

  test("/stop in a DM stops the answer in flight and tells whether there was one", async () => {
    await start();
    discord.userSays({ channelId: discord.ids.dm, content: "/stop" });
    expect((await botReplies(discord.ids.dm, 1))[0]?.content).toMatch(/Stopped/);
    gateway.stopAnswer = false;
    discord.userSays({ channelId: discord.ids.dm, content: "/stop" });
    expect((await botReplies(discord.ids.dm, 2))[1]?.content).toMatch(/Nothing to stop/);
    expect(gateway.stops).toEqual([`dc:${discord.ids.dm}`, `dc:${discord.ids.dm}`]);
  });

  test("/help and unknown commands answer with help; a bare /reset in a channel is not for us", async () => {
    await start();
    discord.userSays({ channelId: discord.ids.general, content: "/reset" });
    discord.userSays({ channelId: discord.ids.general, content: "/frobnicate now", mentionsBot: true });
    const [help] = await botReplies(discord.ids.general);
    expect(help?.content).toMatch(/\/reset/);
    expect(help?.content).toMatch(/mention me/);
    expect(gateway.resets).toEqual([]);
  });

  test("slash commands are registered at start and answered privately", async () => {
    await start();
    expect(discord.commands.map((c) => c.name).sort()).toEqual(["Ask testbot", "compact", "help", "reset", "stop"]);
    const { id } = discord.runCommand({ channelId: discord.ids.thread, name: "reset" });
    const response = await discord.waitFor(() => discord.interactionResponses.find((r) => r.interactionId === id));
    expect(gateway.resets).toEqual([`dc:${discord.ids.thread}`]);
    expect(response.type).toBe(4);
    expect(response.ephemeral).toBe(true);
    expect(discord.botMessages(discord.ids.thread)).toEqual([]);
  });

  test("the Stop button on a streaming message stops that channel's answer and acknowledges the click", async () => {
    await start();
    const rest = createDiscordRestClient({ token: discord.token, apiBase: discord.apiBase });
    const streaming = await rest.request<{ id: string }>("POST", `/channels/${discord.ids.general}/messages`, {
      body: { content: "Writing…", components: [stopButtonRow()], allowed_mentions: { parse: [] } },
    });
    const { id } = discord.clickButton({
      channelId: discord.ids.general,
      messageId: streaming.id,
      customId: "stop",
      user: discord.users.bob,
    });

    const response = await discord.waitFor(() => discord.interactionResponses.find((r) => r.interactionId === id));
    expect(response.type).toBe(6); // DEFERRED_UPDATE_MESSAGE: acknowledged, the worker's final edit removes the button
    await discord.waitFor(() => gateway.stops.length === 1);
    expect(gateway.stops).toEqual([`dc:${discord.ids.general}`]);
  });
});
