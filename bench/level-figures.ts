/**
 * The figures of one level: per chat kind (latencies, writes, violations) from the
 * fakes' records, and per level (CPU per token, peak memory, Redis commands per
 * job, CPU per reply) from the waves' samples. Targets come from the benchmark's issue
 * (bench/README.md) and the bot's own pacing.
 */
import { DISCORD_DEFAULT_EDIT_INTERVAL_MS as DISCORD_DEFAULT_INTERVAL_MS } from "../src/bots/discord/discord-pacing.js";
import {
  TELEGRAM_GROUP_EDIT_INTERVAL_MS as TELEGRAM_GROUP_INTERVAL_MS,
  TELEGRAM_PRIVATE_EDIT_INTERVAL_MS as TELEGRAM_PRIVATE_INTERVAL_MS,
} from "../src/bots/telegram/telegram-pacing.js";
import type { BenchConversation, ChatPlatforms, ViolationCount } from "./chat-platforms.js";
import { conversationFigures, KINDS, type ChatKind, type ConversationFigures } from "./conversation-figures.js";
import type { ModelTap } from "./model-tap.js";
import { mean, percentile } from "./stats.js";
import type { ProcessUse, WaveTotals } from "./wave.js";

/** Display names, in table order. */
export const KIND_NAMES: Record<ChatKind, string> = {
  "tg-private": "Telegram private (drafts)",
  "tg-group": "Telegram group",
  discord: "Discord channel",
};

/**
 * The chat kinds of each wave of a level: round-robin over `kinds`, or, when the level is
 * smaller than the number of kinds, one wave per kind (so every kind is measured).
 */
export function planLevel(level: number, kinds: readonly ChatKind[] = KINDS): ChatKind[][] {
  if (level < kinds.length) return kinds.map((kind) => Array.from({ length: level }, () => kind));
  return [Array.from({ length: level }, (_, i) => kinds[i % kinds.length] as ChatKind)];
}

/** The bot's pacing interval per chat kind (the adapters' pacing rules; Discord's equals what the fake's 5-per-5 s headers teach). */
export function intervalOf(kind: ChatKind): number {
  switch (kind) {
    case "tg-private":
      return TELEGRAM_PRIVATE_INTERVAL_MS;
    case "tg-group":
      return TELEGRAM_GROUP_INTERVAL_MS;
    case "discord":
      return DISCORD_DEFAULT_INTERVAL_MS;
  }
}

/** A limit stated at one level of conversations only; at other levels the figure is shown without a verdict. */
export interface LevelLimit {
  level: number;
  limit: number;
}

/** The targets the benchmark holds the bot to (bench/README.md says where each comes from). */
export const TARGETS = {
  firstSignP50Ms: 25,
  firstSignP99Ms: 100,
  /** First sign of life targets are stated "at 100"; at higher levels the figure is shown without a verdict. */
  firstSignUpToLevel: 100,
  /** Drafts stream natively, so Telegram private chats have their own freshness bound. */
  draftFreshnessP95Ms: 400,
  freshnessMarginMs: 100,
  finalBeyondWaitP50Ms: 30,
  violations: 0,
  // The process targets are stated at 100 conversations (the worker's RSS also at 500).
  workerCpuPerTokenMicros: [{ level: 100, limit: 60 }],
  /** Worker + bots CPU per reply, strictly below the limit, when the level is Telegram private chats alone. */
  tgPrivateCpuPerReplyMs: [{ level: 100, limit: 40 }],
  workerPeakRssMb: [
    { level: 100, limit: 150 },
    { level: 500, limit: 300 },
  ],
  botsPeakRssMb: [{ level: 100, limit: 120 }],
  /** The bots role's RSS at rest: after the warm-up, a settle and two GCs, before the first level. */
  botsIdleRssMb: 100,
  /** Commands sent plus those run inside Lua scripts. */
  redisPerJob: [{ level: 100, limit: 120 }],
} as const satisfies Record<string, number | readonly LevelLimit[]>;

/** The limit of `limits` stated at `level`, if any. */
export function limitAt(limits: readonly LevelLimit[], level: number): number | undefined {
  return limits.find((l) => l.level === level)?.limit;
}

/** Freshness p95 target of a chat kind. */
export function freshnessTarget(kind: ChatKind): number {
  return kind === "tg-private" ? TARGETS.draftFreshnessP95Ms : intervalOf(kind) + TARGETS.freshnessMarginMs;
}

/** A p50/p99-style pair (undefined without samples). */
export interface Spread {
  n: number;
  p50?: number;
  p95?: number;
  p99?: number;
}

/** The figures of one chat kind at one level. */
export interface KindFigures {
  kind: ChatKind;
  conversations: number;
  /** Conversations whose complete answer became visible in its final state. */
  finished: number;
  firstSignMs: Spread;
  /** Question → first word of the answer visible (no target: it includes the fake model's fixed pace). */
  firstWordMs: Spread;
  freshnessMs: Spread;
  /** Answer words never seen on the platform (should be 0). */
  neverShown: number;
  finalMs: Spread;
  /** finalMs minus the wait the chat's pacing imposed. */
  finalBeyondWaitMs: Spread;
  /** Replies whose final had no pacing wait due, and their finalMs. */
  finalNoWaitMs: Spread;
  perReply: { sends?: number; edits?: number; drafts?: number };
  violations: ViolationCount;
  freshnessTargetMs: number;
  intervalMs: number;
}

/** Per-process use over the level, normalised. */
export interface ProcessFigures {
  cpuMicros: number;
  /** Share of cpuMicros spent in the kernel, when known. */
  systemShare?: number;
  peakRssBytes: number;
  /** CPU time over wall time (1 = one core busy). */
  coresBusy: number;
  /** Worst event-loop delay p99 of the level's waves. */
  loopDelayP99Ms: number;
}

/** Whether the machine, not the bot, was the bound: other load and the pace the fake model managed. */
export interface MachineFigures {
  /** 1-minute load average at the end of the level, and the cores. */
  loadAverage: number;
  cores: number;
  /** Answer tokens per second the fake model achieved per conversation: median and slow tail (p5). */
  modelPace: { n: number; p50?: number; p5?: number };
}

/** One role process at rest. */
export interface IdleSample {
  rssBytes: number;
  /** The process' RSS high-water mark since it started (start-up included). */
  maxRssBytes: number;
  /**
   * The V8 heap after the collection: in use, and committed. V8 gives committed-but-empty
   * heap back to the system only later, when it sees the process quiet (its memory reducer).
   */
  heapUsedBytes?: number;
  heapTotalBytes?: number;
  /** Full GCs ran just before the sample (the probe could trigger them). */
  gcRan: boolean;
}

/** The roles at rest before the first level: after the warm-up, a settle and two GCs. */
export interface IdleFigures {
  settleMs: number;
  worker: IdleSample;
  /** Absent when the bots role ran in the benchmark process (its RSS is not its own there). */
  bots?: IdleSample;
}

/** CPU time of the roles per reply (ms), over a set of waves. */
export interface CpuPerReply {
  replies: number;
  workerMs: number;
  /** The bots process' share; absent when the bots role ran in the benchmark process (not measurable apart). */
  botsMs?: number;
  /** workerMs + botsMs, or workerMs alone without a bots process. */
  totalMs: number;
}

/** The waves' figures CPU per reply is computed from. */
type CpuWave = Pick<WaveTotals, "conversations" | "worker" | "botsProcess">;

/** Worker (+ bots process) CPU over `waves` divided by their questions; undefined without any. */
export function cpuPerReply(waves: readonly CpuWave[]): CpuPerReply | undefined {
  const replies = waves.reduce((sum, w) => sum + w.conversations.length, 0);
  if (replies === 0) return undefined;
  const workerMs = waves.reduce((sum, w) => sum + w.worker.cpuMicros, 0) / 1000 / replies;
  // The bots figure only counts when every wave measured it: a partial sum would read as a low one.
  if (!waves.every((w) => w.botsProcess)) return { replies, workerMs, totalMs: workerMs };
  const botsMs = waves.reduce((sum, w) => sum + (w.botsProcess?.cpuMicros ?? 0), 0) / 1000 / replies;
  return { replies, workerMs, botsMs, totalMs: workerMs + botsMs };
}

/**
 * CPU per reply of each chat kind that had waves of its own (level 1 runs one wave per kind;
 * `--kinds` with one kind makes every level so). In a mixed wave the kinds share the
 * processes, so their CPU cannot be told apart and the kind has no entry.
 */
export function cpuPerReplyByKind(waves: readonly CpuWave[]): Partial<Record<ChatKind, CpuPerReply>> {
  const out: Partial<Record<ChatKind, CpuPerReply>> = {};
  for (const kind of KINDS) {
    const alone = waves.filter((w) => w.conversations.length > 0 && w.conversations.every((c) => c.kind === kind));
    const figure = cpuPerReply(alone);
    if (figure) out[kind] = figure;
  }
  return out;
}

/** Everything measured at one level. */
export interface LevelFigures {
  level: number;
  answerWords: number;
  waves: number;
  wallMs: number;
  kinds: KindFigures[];
  tokens: number;
  worker: ProcessFigures & { cpuPerTokenMicros?: number };
  botsProcess?: ProcessFigures;
  /** Worker + bots CPU per reply over every reply of the level (kinds mixed when the level mixes them). */
  cpuPerReply?: CpuPerReply;
  /** The same per chat kind, where the kind had waves of its own. */
  cpuPerReplyByKind: Partial<Record<ChatKind, CpuPerReply>>;
  /** The benchmark process: fakes, model tap and, with --bots-in-process, the bots role. */
  bench: ProcessFigures;
  redis: {
    commands: number;
    perJob?: number;
    /** With --redis-monitor, per job: commands clients sent, and commands run inside Lua scripts. */
    perJobSplit?: { client: number; lua: number };
    top: [string, number][];
    historyMessages: number;
  };
  machine: MachineFigures;
  jobs: {
    asked: number;
    outcomes: Record<string, number>;
    unfinished: number;
    /** Adapter received the message → the worker started the job (from the worker's outcome lines). */
    queueWaitMs: Spread;
  };
  notes: string[];
}

const spread = (samples: readonly number[]): Spread => {
  const out: Spread = { n: samples.length };
  const p50 = percentile(samples, 50);
  const p95 = percentile(samples, 95);
  const p99 = percentile(samples, 99);
  if (p50 !== undefined) out.p50 = p50;
  if (p95 !== undefined) out.p95 = p95;
  if (p99 !== undefined) out.p99 = p99;
  return out;
};

const optionalMean = (values: number[]): number | undefined => mean(values);

/** Computes the figures of a chat kind from the fakes' records and the tap. */
export function kindFigures(
  kind: ChatKind,
  conversations: readonly BenchConversation[],
  platforms: ChatPlatforms,
  tap: ModelTap,
  answerWords: number,
): KindFigures {
  const records = platforms.records(conversations);
  const per: ConversationFigures[] = conversations.map((c) => {
    const record = records.get(c.chatId);
    return conversationFigures({
      ...(record?.deliveredAt !== undefined ? { deliveredAt: record.deliveredAt } : {}),
      writes: record?.writes ?? [],
      stream: tap.streams.get(c.id) ?? { tokens: 0, answerAt: [] },
      intervalMs: intervalOf(kind),
      answerWords,
    });
  });
  const defined = (pick: (f: ConversationFigures) => number | undefined): number[] =>
    per.map(pick).filter((x): x is number => x !== undefined);
  const finals = per.filter((f) => f.finalMs !== undefined);
  const violations = platforms.violations(conversations)[kind === "discord" ? "discord" : "telegram"];
  const perReply: KindFigures["perReply"] = {};
  const sends = optionalMean(per.map((f) => f.sends));
  const edits = optionalMean(per.map((f) => f.edits));
  const drafts = optionalMean(per.map((f) => f.drafts));
  if (sends !== undefined) perReply.sends = sends;
  if (edits !== undefined) perReply.edits = edits;
  if (drafts !== undefined) perReply.drafts = drafts;
  return {
    kind,
    conversations: conversations.length,
    finished: finals.length,
    firstSignMs: spread(defined((f) => f.firstSignMs)),
    firstWordMs: spread(defined((f) => f.firstWordMs)),
    freshnessMs: spread(per.flatMap((f) => f.freshnessMs)),
    neverShown: per.reduce((sum, f) => sum + f.neverShown, 0),
    finalMs: spread(defined((f) => f.finalMs)),
    finalBeyondWaitMs: spread(finals.map((f) => (f.finalMs as number) - (f.dueWaitMs ?? 0))),
    finalNoWaitMs: spread(finals.filter((f) => (f.dueWaitMs ?? 0) === 0).map((f) => f.finalMs as number)),
    perReply,
    violations,
    freshnessTargetMs: freshnessTarget(kind),
    intervalMs: intervalOf(kind),
  };
}

const sumUse = (uses: readonly ProcessUse[], wallMs: number): ProcessFigures => {
  const cpuMicros = uses.reduce((sum, u) => sum + u.cpuMicros, 0);
  const known = uses.every((u) => u.systemMicros !== undefined);
  const systemMicros = uses.reduce((sum, u) => sum + (u.systemMicros ?? 0), 0);
  return {
    cpuMicros,
    ...(known && cpuMicros > 0 ? { systemShare: systemMicros / cpuMicros } : {}),
    peakRssBytes: Math.max(0, ...uses.map((u) => u.peakRssBytes)),
    coresBusy: wallMs > 0 ? cpuMicros / 1000 / wallMs : 0,
    loopDelayP99Ms: Math.max(0, ...uses.map((u) => u.loopDelayP99Ms)),
  };
};

/** Answer tokens per second the fake model achieved, per conversation (first to last answer word). */
export function modelPace(conversations: readonly BenchConversation[], tap: ModelTap): MachineFigures["modelPace"] {
  const paces: number[] = [];
  for (const c of conversations) {
    const stream = tap.streams.get(c.id);
    if (!stream) continue;
    let first: [number, number] | undefined;
    let last: [number, number] | undefined;
    stream.answerAt.forEach((at, k) => {
      first ??= [k, at];
      last = [k, at];
    });
    if (first && last && last[1] > first[1]) paces.push(((last[0] - first[0]) * 1000) / (last[1] - first[1]));
  }
  const p50 = percentile(paces, 50);
  const p5 = percentile(paces, 5);
  return { n: paces.length, ...(p50 !== undefined ? { p50 } : {}), ...(p5 !== undefined ? { p5 } : {}) };
}

/** Folds the waves of a level and its per-kind figures into the level's figures. */
export function levelFigures(
  level: number,
  answerWords: number,
  waves: readonly WaveTotals[],
  kinds: KindFigures[],
  machine: MachineFigures,
): LevelFigures {
  const wallMs = waves.reduce((sum, w) => sum + w.wallMs, 0);
  const tokens = waves.reduce((sum, w) => sum + w.tokens, 0);
  const worker = sumUse(
    waves.map((w) => w.worker),
    wallMs,
  );
  const botsUses = waves.flatMap((w) => (w.botsProcess ? [w.botsProcess] : []));
  const perReply = cpuPerReply(waves);
  const asked = waves.reduce((sum, w) => sum + w.conversations.length, 0);
  const commands = waves.reduce((sum, w) => sum + w.redisCommands, 0);
  const byCommand = new Map<string, number>();
  for (const w of waves)
    for (const [name, calls] of w.redisByCommand) byCommand.set(name, (byCommand.get(name) ?? 0) + calls);
  const outcomes: Record<string, number> = {};
  const queueWaits: number[] = [];
  for (const w of waves) {
    for (const line of w.outcomes.values()) {
      outcomes[line.outcome] = (outcomes[line.outcome] ?? 0) + 1;
      if (line.totalMs !== undefined && line.ms !== undefined) queueWaits.push(line.totalMs - line.ms);
    }
  }
  return {
    level,
    answerWords,
    waves: waves.length,
    wallMs,
    kinds,
    tokens,
    worker: { ...worker, ...(tokens > 0 ? { cpuPerTokenMicros: worker.cpuMicros / tokens } : {}) },
    ...(botsUses.length > 0 ? { botsProcess: sumUse(botsUses, wallMs) } : {}),
    ...(perReply ? { cpuPerReply: perReply } : {}),
    cpuPerReplyByKind: cpuPerReplyByKind(waves),
    bench: sumUse(
      waves.map((w) => w.bench),
      wallMs,
    ),
    redis: {
      commands,
      ...(asked > 0 ? { perJob: commands / asked } : {}),
      ...(asked > 0 && waves.every((w) => w.redisMonitor)
        ? {
            perJobSplit: {
              client: waves.reduce((sum, w) => sum + (w.redisMonitor?.client ?? 0), 0) / asked,
              lua: waves.reduce((sum, w) => sum + (w.redisMonitor?.lua ?? 0), 0) / asked,
            },
          }
        : {}),
      top: [...byCommand.entries()]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 6)
        .map(([name, calls]) => [name, calls / Math.max(1, asked)]),
      // Every benchmark conversation is new: the worker loads an empty history.
      historyMessages: 0,
    },
    machine,
    jobs: {
      asked,
      outcomes,
      unfinished: waves.reduce((sum, w) => sum + w.unfinished.length, 0),
      queueWaitMs: spread(queueWaits),
    },
    notes: waves.flatMap((w) => w.notes),
  };
}
