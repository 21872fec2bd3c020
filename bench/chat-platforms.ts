/**
 * The platforms of the benchmark: the fake Telegram (flood limits in "record" mode,
 * so violations are counted instead of refused), the fake Discord with one channel
 * and one member per Discord conversation, and the fake web for `get_weather`.
 * Users ask their question here; afterwards the same records tell when the adapter
 * got it and what the bot did in each chat.
 */
import type { APIGuildMember, APITextChannel, APIUser } from "discord.js";
import {
  privateChat,
  startFakeTelegram,
  type FakeChat,
  type FakeTelegram,
  type FloodViolation,
} from "../test/fakes/telegram-server.js";
import { startFakeDiscord, type FakeDiscord } from "../test/fakes/discord-server.js";
import { createDefaultWorld, snowflakeAt, type FakeDiscordWorld } from "../test/fakes/discord-fixtures.js";
import { startFakeWeb, type FakeWeb } from "../test/fakes/web-server.js";
import { highestWordShown, type ChatKind, type ChatWrite } from "./conversation-figures.js";
import { questionText } from "./model-script.js";
import { jobIdFor } from "../src/contracts/inbound-message.js";

/** One benchmark conversation: a chat of some kind and the one question asked in it. */
export interface BenchConversation {
  id: number;
  kind: ChatKind;
  /** The platform's chat id (Telegram chat id, Discord channel id). */
  chatId: string;
  /** The bot's conversation key (`tg:<chat>` / `dc:<channel>`), as in its logs. */
  conversationKey: string;
  /** The queue's job id for the question (see src/queue/inbound-message.ts jobIdFor). */
  jobId?: string;
  /** When the user sent it (the fake stored it). */
  askedAt?: number;
}

/** What was recorded in one chat. */
export interface ChatRecord {
  deliveredAt?: number;
  writes: ChatWrite[];
}

/** Rate-limit violations the fakes recorded, by platform rule. */
export interface ViolationCount {
  total: number;
  byRule: Record<string, number>;
}

/** The running platforms. */
export interface ChatPlatforms {
  telegram: FakeTelegram;
  discord: FakeDiscord;
  web: FakeWeb;
  /** Environment for the bot processes (tokens and API roots). */
  env: Record<string, string>;
  /** Creates the chat of a new conversation of `kind` (Discord: the next free channel). */
  conversation(id: number, kind: ChatKind): BenchConversation;
  /** The user asks the benchmark question. */
  ask(conversation: BenchConversation): void;
  /** Delivery time and the bot's requests, for each of these chats. */
  records(conversations: readonly BenchConversation[]): Map<string, ChatRecord>;
  violations(conversations: readonly BenchConversation[]): Record<"telegram" | "discord", ViolationCount>;
  close(): Promise<void>;
}

const TG_PRIVATE_BASE = 100_000;
const TG_GROUP_BASE = 200_000;
const TG_GROUP_USER_BASE = 300_000;

/** A Discord world with `channels` extra text channels and as many members to talk in them. */
export function benchDiscordWorld(channels: number): {
  world: FakeDiscordWorld;
  channels: APITextChannel[];
  users: APIUser[];
} {
  const world = createDefaultWorld();
  const from = Date.UTC(2024, 0, 1);
  const extraChannels: APITextChannel[] = [];
  const extraUsers: APIUser[] = [];
  const extraMembers: APIGuildMember[] = [];
  const template = world.members.find((m) => m.user.id === world.users.carol.id) as APIGuildMember;
  for (let i = 0; i < channels; i++) {
    extraChannels.push({
      ...world.channels.general,
      id: snowflakeAt(from + i * 1000, 1),
      name: `bench-${i}`,
      position: 10 + i,
    });
    const user: APIUser = {
      ...world.users.carol,
      id: snowflakeAt(from + i * 1000, 2),
      username: `bench${i}`,
      global_name: `Bench ${i}`,
    };
    extraUsers.push(user);
    extraMembers.push({ ...template, user });
  }
  // The fake builds its maps from Object.values of these records, so extra entries are served like the fixed ones.
  const channelRecord = Object.fromEntries(extraChannels.map((c) => [c.name, c]));
  const userRecord = Object.fromEntries(extraUsers.map((u) => [u.username, u]));
  return {
    world: {
      ...world,
      channels: { ...world.channels, ...channelRecord },
      users: { ...world.users, ...userRecord },
      members: [...world.members, ...extraMembers],
    },
    channels: extraChannels,
    users: extraUsers,
  };
}

/** Starts the three fakes; `discordChannels` bounds the Discord conversations of the whole run. */
export async function startChatPlatforms(opts: { discordChannels: number }): Promise<ChatPlatforms> {
  const telegram = await startFakeTelegram({ floodLimits: { mode: "record" } });
  const bench = benchDiscordWorld(opts.discordChannels);
  const discord = await startFakeDiscord({ world: bench.world });
  const web = await startFakeWeb();
  let nextDiscord = 0;
  const discordUser = new Map<string, APIUser>();
  // Each recorded request is read once (the records are re-read while a wave runs).
  const parsed = new WeakMap<object, ChatWrite | null>();
  const telegramWrite = (call: ReturnType<FakeTelegram["calls"]>[number]): ChatWrite | null => {
    let write = parsed.get(call);
    if (write !== undefined) return write;
    const kind = TELEGRAM_WRITES[call.method.toLowerCase()];
    const text = typeof call.params.text === "string" ? call.params.text : "";
    write = kind
      ? {
          at: call.at,
          kind,
          ok: call.ok,
          shows: highestWordShown(text),
          final: kind !== "draft" && kind !== "typing" && call.params.reply_markup === undefined,
        }
      : null;
    parsed.set(call, write);
    return write;
  };
  const discordWrite = (request: FakeDiscord["requests"][number]): ChatWrite | null => {
    let write = parsed.get(request);
    if (write !== undefined) return write;
    const kind = DISCORD_WRITES[request.route];
    const content = typeof request.body?.content === "string" ? request.body.content : "";
    const components = request.body?.components as unknown[] | undefined;
    write = kind
      ? {
          at: request.at,
          kind,
          ok: request.status >= 200 && request.status < 300,
          shows: highestWordShown(content),
          final: kind !== "typing" && (components === undefined || components.length === 0),
        }
      : null;
    parsed.set(request, write);
    return write;
  };

  const telegramChat = (c: BenchConversation): { chat: FakeChat; user: { id: number; first_name: string } } => {
    if (c.kind === "tg-private") {
      const user = { id: Number(c.chatId), first_name: `User ${c.id}` };
      return { chat: privateChat(user), user };
    }
    return {
      chat: { id: Number(c.chatId), type: "group", title: `Bench group ${c.id}` },
      user: { id: TG_GROUP_USER_BASE + c.id, first_name: `Member ${c.id}` },
    };
  };

  return {
    telegram,
    discord,
    web,
    env: {
      TELEGRAM_BOT_TOKEN: telegram.token,
      TELEGRAM_API_ROOT: telegram.apiRoot,
      DISCORD_BOT_TOKEN: discord.token,
      DISCORD_API_BASE: discord.apiBase,
      WEATHER_API_BASE: web.url,
    },

    conversation(id, kind) {
      switch (kind) {
        case "tg-private": {
          const chatId = String(TG_PRIVATE_BASE + id);
          return { id, kind, chatId, conversationKey: `tg:${chatId}` };
        }
        case "tg-group": {
          const chatId = String(-(TG_GROUP_BASE + id));
          return { id, kind, chatId, conversationKey: `tg:${chatId}` };
        }
        case "discord": {
          const channel = bench.channels[nextDiscord];
          const user = bench.users[nextDiscord];
          if (!channel || !user)
            throw new Error(`the benchmark's Discord world has only ${bench.channels.length} channels`);
          nextDiscord++;
          discordUser.set(channel.id, user);
          return { id, kind, chatId: channel.id, conversationKey: `dc:${channel.id}` };
        }
      }
    },

    ask(c) {
      const question = questionText(c.id);
      if (c.kind === "discord") {
        const sent = discord.userSays({
          channelId: c.chatId,
          author: discordUser.get(c.chatId),
          content: question,
          mentionsBot: true,
        });
        c.askedAt = Date.now();
        c.jobId = jobIdFor({ platform: "discord", chatId: c.chatId, messageId: sent.id });
        return;
      }
      const { chat, user } = telegramChat(c);
      const text = c.kind === "tg-group" ? `@${telegram.me.username} ${question}` : question;
      const { message } = telegram.userSays(chat, user, text);
      c.askedAt = Date.now();
      c.jobId = jobIdFor({ platform: "telegram", chatId: c.chatId, messageId: String(message.message_id) });
    },

    records(conversations) {
      const wanted = new Set(conversations.map((c) => c.chatId));
      const out = new Map<string, ChatRecord>();
      const recordOf = (chatId: string): ChatRecord => {
        let record = out.get(chatId);
        if (!record) out.set(chatId, (record = { writes: [] }));
        return record;
      };
      for (const call of telegram.calls()) {
        const method = call.method.toLowerCase();
        if (method === "getupdates") {
          // The adapter got an update when the long poll answered with it.
          for (const update of Array.isArray(call.result)
            ? (call.result as { message?: { chat?: { id?: number } } }[])
            : []) {
            const chatId = String(update.message?.chat?.id ?? "");
            if (!wanted.has(chatId)) continue;
            const record = recordOf(chatId);
            record.deliveredAt ??= call.at;
          }
          continue;
        }
        const chatId = String(call.params.chat_id ?? "");
        if (!wanted.has(chatId)) continue;
        const write = telegramWrite(call);
        if (write) recordOf(chatId).writes.push(write);
      }
      for (const c of conversations) {
        if (c.kind === "discord" && c.askedAt !== undefined) recordOf(c.chatId).deliveredAt = c.askedAt;
      }
      for (const request of discord.requests) {
        if (!request.channelId || !wanted.has(request.channelId)) continue;
        const write = discordWrite(request);
        if (write) recordOf(request.channelId).writes.push(write);
      }
      return out;
    },

    violations(conversations) {
      const wanted = new Set(conversations.map((c) => c.chatId));
      const telegramViolations = telegram.floodViolations().filter((v: FloodViolation) => wanted.has(String(v.chatId)));
      const discordViolations = discord.violations.filter((v) => wanted.has(v.channelId));
      return {
        telegram: countBy(telegramViolations.map((v) => v.rule)),
        discord: countBy(discordViolations.map((v) => v.route)),
      };
    },

    async close() {
      await Promise.allSettled([telegram.close(), discord.close(), web.close()]);
    },
  };
}

const TELEGRAM_WRITES: Record<string, ChatWrite["kind"] | undefined> = {
  sendchataction: "typing",
  sendmessagedraft: "draft",
  sendmessage: "send",
  editmessagetext: "edit",
};

const DISCORD_WRITES: Record<string, ChatWrite["kind"] | undefined> = {
  "POST /channels/:id/typing": "typing",
  "POST /channels/:id/messages": "send",
  "PATCH /channels/:id/messages/:id": "edit",
};

function countBy(keys: readonly string[]): ViolationCount {
  const byRule: Record<string, number> = {};
  for (const key of keys) byRule[key] = (byRule[key] ?? 0) + 1;
  return { total: keys.length, byRule };
}
