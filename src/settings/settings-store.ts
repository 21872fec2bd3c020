/**
 * A conversation's settings in Redis: one hash per conversation (no expiry) holding only what differs from the
 * defaults, and `tool:<name>` = `off` per tool switched off. Every change is one HSET/HDEL, so two admins changing
 * different settings never undo each other. A value that no longer parses is logged and ignored: it must never
 * fail an answer.
 */
import type { Redis } from "ioredis";
import { conversationSettingsKey } from "../redis/keys.js";
import type { PipelinedRead } from "../redis/pipelined-read.js";
import { execOrThrow } from "../redis/transaction.js";
import {
  effectiveSettings,
  settingsFieldSchemas,
  type ConversationSettings,
  type SettingsChange,
  type SettingsDefaults,
  type SettingsOverrides,
} from "./conversation-settings.js";

/** Where a bad stored value is reported. */
export interface SettingsLogger {
  warn(obj: object, msg?: string): void;
}

/** Reads and changes conversations' settings. */
export interface SettingsStore {
  readonly defaults: SettingsDefaults;
  /** The conversation's own choices. */
  overrides(conversationKey: string): Promise<SettingsOverrides>;
  /** The settings an answer in this conversation runs with. */
  read(conversationKey: string): Promise<ConversationSettings>;
  /** The same read, queued into another store's pipeline (the worker reads it with the history). */
  readAlong(conversationKey: string): PipelinedRead<ConversationSettings>;
  /** Applies a change (values set, `null` back to the default). */
  change(conversationKey: string, change: SettingsChange): Promise<void>;
  /** Every setting back to the default. */
  reset(conversationKey: string): Promise<void>;
}

const TOOL_FIELD = "tool:";

/** Decodes a stored hash; each bad field is dropped and reported. */
export function decodeSettingsHash(
  hash: Record<string, string>,
  report: (field: string, value: string) => void,
): SettingsOverrides {
  const out: SettingsOverrides = { toolsOff: [] };
  for (const [field, value] of Object.entries(hash)) {
    if (field.startsWith(TOOL_FIELD)) {
      if (value === "off" && field.length > TOOL_FIELD.length) out.toolsOff.push(field.slice(TOOL_FIELD.length));
      else if (value !== "on") report(field, value);
      continue;
    }
    const parsed = Object.hasOwn(settingsFieldSchemas, field)
      ? settingsFieldSchemas[field as keyof typeof settingsFieldSchemas].safeParse(value)
      : undefined;
    if (parsed?.success) Object.assign(out, { [field]: parsed.data });
    else report(field, value);
  }
  out.toolsOff.sort();
  return out;
}

/** Creates the store of one deployment (one KEY_PREFIX). */
export function createSettingsStore(opts: {
  redis: Redis;
  prefix: string;
  defaults: SettingsDefaults;
  logger?: SettingsLogger;
}): SettingsStore {
  const key = (ck: string) => conversationSettingsKey(opts.prefix, ck);
  const decode = (ck: string, reply: unknown): SettingsOverrides =>
    decodeSettingsHash((reply ?? {}) as Record<string, string>, (field, value) =>
      // The value may be anything someone wrote into Redis: log only its length.
      opts.logger?.warn(
        { conversation: ck, field, length: value.length },
        "ignoring an invalid stored setting; the default applies",
      ),
    );

  const store: SettingsStore = {
    defaults: opts.defaults,
    async overrides(ck) {
      return decode(ck, await opts.redis.hgetall(key(ck)));
    },
    async read(ck) {
      return effectiveSettings(opts.defaults, await store.overrides(ck));
    },
    readAlong(ck) {
      return {
        queue: (pipeline) => void pipeline.hgetall(key(ck)),
        decode: (reply) => effectiveSettings(opts.defaults, decode(ck, reply)),
      };
    },
    async change(ck, change) {
      const set: Record<string, string> = {};
      const unset: string[] = [];
      const { tools, thinking, threads, ...texts } = change;
      const onOff = (flag: boolean | null | undefined) => (typeof flag === "boolean" ? (flag ? "on" : "off") : flag);
      for (const [field, value] of Object.entries({ ...texts, thinking: onOff(thinking), threads: onOff(threads) })) {
        if (value === null) unset.push(field);
        else if (value !== undefined) set[field] = value;
      }
      for (const [tool, on] of Object.entries(tools ?? {})) {
        if (on) unset.push(TOOL_FIELD + tool);
        else set[TOOL_FIELD + tool] = "off";
      }
      const multi = opts.redis.multi();
      if (Object.keys(set).length > 0) multi.hset(key(ck), set);
      if (unset.length > 0) multi.hdel(key(ck), ...unset);
      await execOrThrow(multi);
    },
    async reset(ck) {
      await opts.redis.del(key(ck));
    },
  };
  return store;
}
