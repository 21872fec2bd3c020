/** The one schema of the environment: everything reads its settings from the parsed Config, never process.env. */
import { z } from "zod";

// A switch in any letter case (`True`, `YES`): people write booleans the way their last tool did.
const bool = z
  .preprocess(
    (v) => (typeof v === "string" ? v.toLowerCase() : v),
    z.enum(["true", "false", "1", "0", "yes", "no", "on", "off"], {
      message: "expected true or false (also yes/no, on/off, 1/0)",
    }),
  )
  .transform((v) => ["true", "1", "yes", "on"].includes(v));

const positiveInt = (max = Number.MAX_SAFE_INTEGER) =>
  z.coerce
    .number({ message: "expected a whole number" })
    .int({ message: "expected a whole number" })
    .min(1, { message: "expected a whole number of at least 1" })
    .max(max, { message: `expected a whole number of at most ${max}` });

/** A URL with one of `schemes`; parsed once, so a value that is no URL gets one clear issue (never a thrown TypeError). */
const url = (schemes: string[]) =>
  z.string().superRefine((value, ctx) => {
    let parsed: URL;
    try {
      parsed = new URL(value);
    } catch {
      ctx.addIssue({ code: "custom", message: `expected a URL (${schemes.join(", ")})` });
      return;
    }
    if (!schemes.includes(parsed.protocol.replace(":", "")))
      ctx.addIssue({ code: "custom", message: `expected a URL with scheme ${schemes.join(" or ")}` });
    // ioredis decodes the userinfo: a literal % would throw a URIError at connect time, after validation.
    try {
      decodeURIComponent(parsed.username);
      decodeURIComponent(parsed.password);
    } catch {
      ctx.addIssue({
        code: "custom",
        message: "expected a URL whose user and password are percent-encoded (write a literal % as %25)",
      });
    }
  });

/** Comma-separated items, trimmed (and lower-cased when asked), empty ones dropped. */
const list = (lower = false) =>
  z.string().transform((v) =>
    v
      .split(",")
      .map((s) => (lower ? s.trim().toLowerCase() : s.trim()))
      .filter(Boolean),
  );

const idList = list().pipe(z.array(z.string().regex(/^-?\d+$/, { message: "expected comma-separated numeric ids" })));

/** Shard ids as ranges and lists (`0-3`, `4,5`, `0-1,6`): sorted, without duplicates. */
const shardIdList = z
  .string()
  .regex(/^\s*\d+(\s*-\s*\d+)?(\s*,\s*\d+(\s*-\s*\d+)?)*\s*$/, {
    message: "expected shard ids such as 0-3 or 4,5",
  })
  .transform((v) => {
    const ids = new Set<number>();
    for (const part of v.split(",")) {
      const [from, to = from] = part.split("-").map((n) => Number(n.trim()));
      for (let id = from as number; id <= (to as number); id += 1) ids.add(id);
    }
    return [...ids].sort((a, b) => a - b);
  })
  .refine((ids) => ids.length > 0 && ids.length <= 1024, { message: "expected 1 to 1024 shard ids" });

const hostPortList = list(true).pipe(
  z.array(
    z.string().regex(/^(\[[0-9a-f:.]+\]|[^\s:/]+):\d{1,5}$/, { message: "expected comma-separated host:port pairs" }),
  ),
);

const nameList = list().pipe(
  z
    .array(z.string().max(200, { message: "expected model names of at most 200 characters" }))
    .min(1, { message: "expected comma-separated model names" }),
);

const platformIdList = list(true).pipe(
  z.array(z.string().regex(/^(tg|dc):\d+$/, { message: "expected comma-separated tg:<id> or dc:<id>" })),
);

const optionalSecret = z
  .string()
  .transform((v) => v.trim() || undefined)
  .optional();

/** Names and defaults of every environment variable the bot reads. */
export const envSchema = z.object({
  REDIS_URL: url(["redis", "rediss"]).default("redis://127.0.0.1:6379"),
  KEY_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_{}.-]+$/, { message: "expected letters, digits, _ . - { } (no ':' or spaces)" })
    .default("chatbot"),
  OPENAI_BASE_URL: url(["http", "https"]).default("http://127.0.0.1:8080/v1"),
  OPENAI_API_KEY: z.string().min(1, { message: "expected a non-empty key" }).default("sk-local"),
  MODEL: z.string().min(1, { message: "expected a model name" }).default("qwen3-1.7b"),
  MODEL_CHOICES: nameList.optional(),
  MODEL_SERVER: z
    .enum(["llama.cpp", "vllm", "ollama", "lmstudio", "dashscope", "openai"], {
      message: "expected one of llama.cpp, vllm, ollama, lmstudio, dashscope, openai",
    })
    .default("llama.cpp"),
  ENABLE_THINKING: bool.default(true),
  MAX_TOOL_ROUNDS: positiveInt(50).default(5),
  MODEL_MAX_TOKENS: positiveInt().default(4096),
  // Unset: the server's n_ctx from GET /props (Ollama: POST /api/show), else 8192 (resolved on first use).
  MODEL_CONTEXT_TOKENS: positiveInt(10_000_000).optional(),
  // Ollama only: how long the model (and its prompt cache) stays loaded after a request. Ollama's own syntax:
  // a Go duration ("30m", "1h30m") or whole seconds ("3600"; "-1" keeps it loaded, "0" unloads at once).
  MODEL_KEEP_ALIVE: z
    .string()
    .trim()
    .regex(/^(-?\d+|-?(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+)$/, {
      message: 'expected a duration such as "30m" or "1h", or whole seconds ("-1": keep the model loaded)',
    })
    .default("30m"),
  MODEL_TEMPERATURE: z.coerce.number({ message: "expected a number" }).min(0).max(2).optional(),
  MODEL_TOP_P: z.coerce.number({ message: "expected a number" }).gt(0).max(1).optional(),
  MODEL_TIMEOUT_MS: positiveInt().default(120_000),
  TOOL_TIMEOUT_MS: positiveInt().default(15_000),
  TELEGRAM_BOT_TOKEN: optionalSecret,
  TELEGRAM_API_ROOT: url(["http", "https"]).default("https://api.telegram.org"),
  // Telegram's setWebhook accepts only https URLs.
  TELEGRAM_WEBHOOK_URL: url(["https"]).optional(),
  DISCORD_BOT_TOKEN: optionalSecret,
  DISCORD_API_BASE: url(["http", "https"]).default("https://discord.com/api"),
  // Unset = one unsharded session; `auto` = the `shards` figure of GET /gateway/bot.
  DISCORD_SHARD_COUNT: z.union([z.literal("auto"), positiveInt(65_536)]).optional(),
  // This process's shards; unset = all of DISCORD_SHARD_COUNT.
  DISCORD_SHARD_IDS: shardIdList.optional(),
  // A mention in a server channel opens a public thread on it; the answer and follow-ups go there
  // (a channel's admins override it with /settings threads on|off).
  DISCORD_AUTO_THREAD: bool.default(false),
  // 👀 queued, 🔧 tools, ✅ done, ⚠️ failed on the user's Discord message; 👀, 👨‍💻, 👌, 😢 on Telegram (its allowed emoji).
  STATUS_REACTIONS: z.enum(["on", "off"], { message: "expected on or off" }).default("off"),
  WEATHER_API_BASE: url(["http", "https"]).default("https://wttr.in"),
  NEWS_RSS_URL: z
    .string()
    .default("https://news.google.com/rss/search?q={query}&hl=en-US&gl=US&ceid=US:en")
    .pipe(url(["http", "https"]))
    .refine((v) => v.includes("{query}") || v.includes("%7Bquery%7D"), {
      message: "expected a URL template containing {query}",
    }),
  READ_URL_ALLOW_HOSTS: hostPortList.default([]),
  // Unset: no web_search. The instance must list `json` in its settings.yml search.formats.
  SEARXNG_URL: url(["http", "https"]).optional(),
  MAX_SCHEDULES_PER_CHAT: positiveInt(1000).default(10),
  SCHEDULE_MAX_RUNS: positiveInt(1_000_000).default(100),
  MCP_CONFIG: z.string().min(1, { message: "expected the path of an MCP servers JSON file" }).optional(),
  MAX_TOOLS_PER_REQUEST: positiveInt(128).default(16),
  MCP_MAX_TOOLS_PER_SERVER: positiveInt(1000).default(64),
  WORKER_CONCURRENCY: positiveInt(1000).default(8),
  QUEUE_LOCK_MS: positiveInt().default(30_000),
  QUEUE_STALLED_CHECK_MS: positiveInt().default(30_000),
  QUEUE_ATTEMPTS: positiveInt(50).default(4),
  QUEUE_RETRY_BACKOFF_MS: positiveInt().default(2000),
  SHUTDOWN_GRACE_MS: positiveInt().default(10_000),
  HTTP_PORT: z.coerce.number({ message: "expected a port number" }).int().min(0).max(65535).default(9464),
  // A short token can be guessed through the dashboard's login.
  ADMIN_TOKEN: optionalSecret.refine((v) => v === undefined || v.length >= 16, {
    message: "expected at least 16 characters",
  }),
  ADMIN_USER_IDS: platformIdList.default([]),
  // The web chat and console on HTTP_PORT (src/bots/web): off unless asked for, it is a door from the network.
  WEB_CHAT: z.enum(["on", "off"], { message: "expected on or off" }).default("off"),
  WEB_USERS: list()
    .pipe(
      z.array(
        z
          .string()
          .regex(/^[A-Za-z0-9_.-]{1,64}:.{8,}$/, {
            message: "expected comma-separated name:password pairs (passwords of at least 8 characters)",
          })
          .refine((pair) => !pair.toLowerCase().startsWith("admin:"), {
            message: "the name admin is taken: the admin signs in with ADMIN_TOKEN",
          }),
      ),
    )
    .transform((pairs) =>
      pairs.map((pair) => ({ name: pair.slice(0, pair.indexOf(":")), password: pair.slice(pair.indexOf(":") + 1) })),
    )
    .default([]),
  SHOW_REASONING: z
    .enum(["off", "collapsed", "full"], { message: "expected off, collapsed or full" })
    .default("collapsed"),
  TELEGRAM_ALLOWED_CHATS: idList.default([]),
  TELEGRAM_ALLOWED_USERS: idList.default([]),
  DISCORD_ALLOWED_GUILDS: idList.default([]),
  DISCORD_ALLOWED_CHANNELS: idList.default([]),
  USER_RATE_LIMIT: positiveInt().default(20),
  MAX_INPUT_CHARS: positiveInt().default(4000),
  HISTORY_MAX_MESSAGES: positiveInt().default(40),
  HISTORY_MAX_TOKENS: positiveInt().default(6000),
  HISTORY_TTL_SECONDS: positiveInt().default(604_800),
  MODEL_VISION: z.enum(["auto", "on", "off"], { message: "expected auto, on or off" }).default("auto"),
  MAX_IMAGE_BYTES: positiveInt(100 * 1024 * 1024).default(10 * 1024 * 1024),
  MAX_IMAGES_PER_MESSAGE: positiveInt(16).default(4),
  // Voice: an OpenAI-compatible transcription server (unset: voice notes get a line saying voice is not set up).
  STT_BASE_URL: url(["http", "https"]).optional(),
  STT_MODEL: z.string().min(1, { message: "expected a model name" }).default("whisper-1"),
  STT_API_KEY: optionalSecret,
  MAX_AUDIO_SECONDS: positiveInt(4 * 3600).default(300),
  // Spoken answers: an OpenAI-compatible speech server and its voice (unset: text only).
  TTS_BASE_URL: url(["http", "https"]).optional(),
  TTS_VOICE: z.string().min(1, { message: "expected a voice name" }).default("alloy"),
  /** Read before the schema (src/config/env-file.ts): the file of settings to load instead of ./.env. */
  ENV_FILE: z.string().optional(),
  LOG_LEVEL: z
    .enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"], {
      message: "expected fatal, error, warn, info, debug, trace or silent",
    })
    .default("info"),
  /** `auto`: human lines on a terminal, JSON lines otherwise (containers, files, log shippers). */
  LOG_FORMAT: z.enum(["auto", "json", "pretty"], { message: "expected auto, json or pretty" }).default("auto"),
});

/** The validated settings the whole program runs on. */
export type Config = z.infer<typeof envSchema>;
