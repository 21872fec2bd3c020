/**
 * One wave of a level: a set of conversations whose questions arrive spread over
 * the ramp, all answered concurrently by the one worker process. The wave ends
 * when the worker logged an outcome for every question (its "job outcome" line),
 * or, if those lines never come, a few seconds after every final text is visible
 * at the fakes. A slow machine only makes it longer: it is given up only when
 * nothing moved (no model token, no outcome) for a while, or after a hard cap. Around it the benchmark samples
 * the processes' CPU time and peak memory and Redis' command counters.
 */
import { monitorEventLoopDelay } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import type { BenchRedis, CommandCounts, MonitorCounts } from "./bench-redis.js";
import { commandsBetween } from "./bench-redis.js";
import type { BenchConversation, ChatPlatforms } from "./chat-platforms.js";
import type { ModelTap } from "./model-tap.js";
import type { ProbeReply } from "./probe-protocol.js";
import type { RoleProcess } from "./role-process.js";

/** Peak RSS and event-loop delay of the benchmark process itself (fakes, and the bots role when in-process). */
export interface SelfSampler {
  /** Starts a new window. */
  reset(): void;
  readonly peakRssBytes: number;
  readonly loopDelayP99Ms: number;
  readonly loopDelayMaxMs: number;
  stop(): void;
}

/** Samples this process' RSS every 100 ms and its event-loop delay. */
export function createSelfSampler(): SelfSampler {
  let peak = 0;
  const sample = () => {
    const rss = process.memoryUsage.rss();
    if (rss > peak) peak = rss;
  };
  const timer = setInterval(sample, 100);
  timer.unref();
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  return {
    reset() {
      peak = 0;
      sample();
      delay.reset();
    },
    get peakRssBytes() {
      sample();
      return peak;
    },
    get loopDelayP99Ms() {
      return delay.percentile(99) / 1e6;
    },
    get loopDelayMaxMs() {
      return delay.max / 1e6;
    },
    stop() {
      clearInterval(timer);
      delay.disable();
    },
  };
}

/** What a wave runs against. */
export interface WaveContext {
  platforms: ChatPlatforms;
  tap: ModelTap;
  redis: BenchRedis;
  worker: RoleProcess;
  /** How many worker processes `worker` stands for (`--workers`; 1 when absent). */
  workerProcesses?: number;
  /** The bots role, when it runs as its own process. */
  botsProcess?: RoleProcess;
  self: SelfSampler;
  rampMs: number;
  /** The wave is given up when neither a model token nor an outcome came for this long. */
  stallMs: number;
  /** …or when it has run this long in all. */
  capMs: number;
}

/** What the worker's "job outcome" log line says about one job (src/observability/job-outcomes.ts). */
export interface JobOutcomeLine {
  outcome: string;
  /** This attempt's time. */
  ms?: number;
  /** Since the adapter received the message. */
  totalMs?: number;
}

/** CPU time, peak memory and event-loop delay of one process over a wave. */
export interface ProcessUse {
  cpuMicros: number;
  /** The kernel's part (undefined for the benchmark process' own figure where not split). */
  systemMicros?: number;
  peakRssBytes: number;
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
}

/** Totals of one wave. */
export interface WaveTotals {
  conversations: BenchConversation[];
  wallMs: number;
  worker: ProcessUse;
  botsProcess?: ProcessUse;
  bench: ProcessUse;
  redisCommands: number;
  redisByCommand: [string, number][];
  /** With --redis-monitor: commands clients sent (round trips) and commands run inside Lua scripts. */
  redisMonitor?: MonitorCounts;
  /** Deltas the model streamed for these conversations (every round). */
  tokens: number;
  /** Outcomes the worker logged, by conversation key. */
  outcomes: Map<string, JobOutcomeLine>;
  unfinished: BenchConversation[];
  notes: string[];
}

/** Asks every question (spread over the ramp) and waits until all are answered. */
export async function runWave(
  ctx: WaveContext,
  conversations: BenchConversation[],
  answerWords: number,
): Promise<WaveTotals> {
  const keys = new Set(conversations.map((c) => c.conversationKey));
  const outcomes = new Map<string, JobOutcomeLine>();
  const notes: string[] = [];
  let wake: () => void = () => undefined;
  /** Outcome lines per worker process (pino's `pid`), to show that every process took its share. */
  const byProcess = new Map<string, number>();
  const stopListening = ctx.worker.onLog((line) => {
    const key = line.conversation;
    // "failed" means this attempt will be retried; every other outcome ends the job.
    if (typeof key === "string" && keys.has(key) && typeof line.outcome === "string" && line.outcome !== "failed") {
      const pid = String(line.pid ?? "?");
      byProcess.set(pid, (byProcess.get(pid) ?? 0) + 1);
      outcomes.set(key, {
        outcome: line.outcome,
        ...(typeof line.ms === "number" ? { ms: line.ms } : {}),
        ...(typeof line.totalMs === "number" ? { totalMs: line.totalMs } : {}),
      });
      if (outcomes.size === keys.size) wake();
    }
  });

  const workerBefore = await ctx.worker.sample(true);
  const botsBefore = await ctx.botsProcess?.sample(true);
  ctx.self.reset();
  const benchCpuBefore = process.cpuUsage();
  const redisBefore: CommandCounts = await ctx.redis.commandCounts();
  const monitorBefore = ctx.redis.monitorCounts();
  const startedAt = Date.now();

  // Questions arrive evenly over the ramp, from a fixed schedule (no drift from slow turns of the loop).
  const step = conversations.length > 1 ? ctx.rampMs / conversations.length : 0;
  for (let i = 0; i < conversations.length; i++) {
    const due = startedAt + i * step - Date.now();
    if (due > 0) await sleep(due);
    ctx.platforms.ask(conversations[i] as BenchConversation);
  }

  const streamed = () => conversations.reduce((sum, c) => sum + (ctx.tap.streams.get(c.id)?.tokens ?? 0), 0);
  let progress = { tokens: 0, outcomes: 0, at: Date.now() };
  let lastOutcomeAt = Date.now();
  let gaveUp: string | undefined;
  let allVisibleSince: number | undefined;
  while (outcomes.size < keys.size) {
    await Promise.race([new Promise<void>((resolve) => (wake = resolve)), sleep(2000)]);
    if (outcomes.size >= keys.size) break;
    const now = Date.now();
    const tokens = streamed();
    if (outcomes.size !== progress.outcomes) lastOutcomeAt = now;
    if (tokens !== progress.tokens || outcomes.size !== progress.outcomes)
      progress = { tokens, outcomes: outcomes.size, at: now };
    if (now - progress.at > ctx.stallMs) gaveUp = `nothing moved for ${ctx.stallMs / 1000} s`;
    else if (now - startedAt > ctx.capMs) gaveUp = `the wave ran for ${ctx.capMs / 1000} s`;
    if (gaveUp) break;
    // Fallback when outcome lines stop coming (a changed log format): the fakes show every final text.
    // Reading every record is not free: only once the model has finished every answer and the lines are missing.
    const modelDone = conversations.every((c) => ctx.tap.streams.get(c.id)?.finishAt !== undefined);
    if (
      modelDone &&
      now - lastOutcomeAt > 5000 &&
      finalsVisible(ctx.platforms, conversations, answerWords).size === conversations.length
    ) {
      allVisibleSince ??= Date.now();
      if (Date.now() - allVisibleSince > 3000) {
        notes.push(
          `the worker logged ${outcomes.size} of ${keys.size} job outcomes; the wave ended on the fakes' final texts`,
        );
        break;
      }
    }
  }
  stopListening();
  const processes = ctx.workerProcesses ?? 1;
  if (processes > 1) {
    const counts = [...byProcess.values()].sort((a, b) => b - a);
    const idle = Math.max(0, processes - counts.length);
    notes.push(
      `jobs per worker process: ${[...counts, ...Array<number>(idle).fill(0)].join(" · ")} (${processes} processes)`,
    );
  }
  const unfinished = conversations.filter((c) => !outcomes.has(c.conversationKey));
  if (gaveUp && unfinished.length > 0)
    notes.push(`${unfinished.length} questions had no outcome when the wave was given up (${gaveUp})`);
  // Let the job bookkeeping after the last outcome line (queue advance, completion) reach Redis.
  await sleep(300);

  const wallMs = Date.now() - startedAt;
  const redisAfter = await ctx.redis.commandCounts();
  const monitorAfter = ctx.redis.monitorCounts();
  const benchCpu = process.cpuUsage(benchCpuBefore);
  const workerAfter = await ctx.worker.sample();
  const botsAfter = await ctx.botsProcess?.sample();
  const commands = commandsBetween(redisBefore, redisAfter);
  const visibleAtEnd = finalsVisible(ctx.platforms, unfinished, answerWords);
  let tokens = 0;
  for (const c of conversations) tokens += ctx.tap.streams.get(c.id)?.tokens ?? 0;

  return {
    conversations,
    wallMs,
    worker: use(workerBefore, workerAfter),
    ...(botsBefore && botsAfter ? { botsProcess: use(botsBefore, botsAfter) } : {}),
    bench: {
      cpuMicros: benchCpu.user + benchCpu.system,
      peakRssBytes: ctx.self.peakRssBytes,
      loopDelayP99Ms: ctx.self.loopDelayP99Ms,
      loopDelayMaxMs: ctx.self.loopDelayMaxMs,
    },
    redisCommands: commands.total,
    redisByCommand: commands.byCommand,
    ...(monitorBefore && monitorAfter
      ? {
          redisMonitor: {
            client: monitorAfter.client - monitorBefore.client,
            lua: monitorAfter.lua - monitorBefore.lua,
          },
        }
      : {}),
    tokens,
    outcomes,
    unfinished: unfinished.filter((c) => !visibleAtEnd.has(c.chatId)),
    notes,
  };
}

const use = (before: ProbeReply, after: ProbeReply): ProcessUse => ({
  cpuMicros: after.cpuMicros - before.cpuMicros,
  systemMicros: after.systemMicros - before.systemMicros,
  peakRssBytes: after.peakRssBytes,
  loopDelayP99Ms: after.loopDelayP99Ms,
  loopDelayMaxMs: after.loopDelayMaxMs,
});

/** Chats among `conversations` whose complete answer is visible in its final state. */
function finalsVisible(
  platforms: ChatPlatforms,
  conversations: readonly BenchConversation[],
  answerWords: number,
): Set<string> {
  const done = new Set<string>();
  if (conversations.length === 0) return done;
  for (const [chatId, record] of platforms.records(conversations)) {
    if (
      record.writes.some((w) => w.ok && w.final && (w.kind === "send" || w.kind === "edit") && w.shows >= answerWords)
    )
      done.add(chatId);
  }
  return done;
}
