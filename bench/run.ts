/**
 * `npm run bench`: the bot under load against real Redis and the test fakes, figures
 * printed as a table (see bench/README.md for what each figure means and how it is
 * measured). Self-contained: starts the fakes (model behind a timing tap, Telegram,
 * Discord, web), one worker process (`main.js worker`, built or through tsx; N with
 * `--workers N`) and the
 * bots role, runs each level, prints its block, and removes every key it wrote.
 */
import { formatPromptCache, measurePromptCache } from "./prompt-cache.js";
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { availableParallelism, loadavg } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { startFakeOpenAI, type FakeOpenAI } from "../test/fakes/openai-server.js";
import { HelpRequested, parseBenchArgs, wordsAt, type BenchOptions } from "./bench-options.js";
import { openBenchRedis, type BenchRedis } from "./bench-redis.js";
import { startBotsInProcess } from "./bots-in-process.js";
import { startChatPlatforms, type BenchConversation, type ChatPlatforms } from "./chat-platforms.js";
import { KINDS, type ChatKind } from "./conversation-figures.js";
import {
  KIND_NAMES,
  kindFigures,
  levelFigures,
  modelPace,
  planLevel,
  type IdleFigures,
  type IdleSample,
  type LevelFigures,
} from "./level-figures.js";
import { benchModelHandler } from "./model-script.js";
import { startModelTap, type ModelTap } from "./model-tap.js";
import { formatIdle, formatLevel, formatVerdicts, formatWarmUp } from "./report.js";
import { formatProfileSummary } from "./cpu-profile-summary.js";
import type { ProbeReply } from "./probe-protocol.js";
import { deployedNodeFlags } from "./deployed-node-flags.js";
import { roleEntry, startRoleProcess, type RoleEntry, type RoleProcess } from "./role-process.js";
import { workerGroup } from "./worker-group.js";
import { createSelfSampler, runWave, type WaveContext, type WaveTotals } from "./wave.js";
import { traceOf, type TraceEntry } from "./trace.js";

const REPO_ROOT = fileURLToPath(new URL("..", import.meta.url));
/** Words of the warm-up answers (one per chat kind, not reported): JIT, connections, Discord's learnt pacing. */
const WARM_UP_WORDS = 20;
/** After the warm-up, the roles rest this long before the idle sample (timers after the last job, sockets closing). */
const IDLE_SETTLE_MS = 2000;

const progress = (text: string) => process.stderr.write(`${text}\n`);

/** What a run measured. */
interface RunFigures {
  idle: IdleFigures;
  levels: LevelFigures[];
}

async function run(options: BenchOptions, redisUrl: string): Promise<RunFigures> {
  const closers: (() => Promise<unknown>)[] = [];
  const cleanup = async () => {
    while (closers.length > 0)
      await closers
        .pop()?.()
        .catch((error: unknown) => progress(`cleanup: ${String(error)}`));
  };
  const interrupted = () => void cleanup().then(() => process.exit(130));
  process.once("SIGINT", interrupted);
  try {
    const plans = options.levels.map((level) => planLevel(level, options.kinds));
    const warmUpKinds = warmUpPlan(options);
    const discordChannels = 1 + [...plans.flat(2), ...warmUpKinds].filter((kind) => kind === "discord").length;
    const prefix = `bench-${randomBytes(4).toString("hex")}`;

    const redis: BenchRedis = await openBenchRedis({ url: redisUrl, privateServer: options.privateRedis });
    closers.push(() => redis.close());
    closers.push(async () => progress(`removed ${await redis.deletePrefix(prefix)} keys under ${prefix}`));
    if (options.redisMonitor) await redis.startMonitor();

    const answerWords = new Map<number, number>();
    const model: FakeOpenAI = await startFakeOpenAI(
      benchModelHandler({
        answerWords: (id) => answerWords.get(id) ?? WARM_UP_WORDS,
        tokensPerSecond: options.tokensPerSecond,
      }),
    );
    closers.push(() => model.close());
    const tap: ModelTap = await startModelTap({ upstreamPort: model.port });
    closers.push(() => tap.close());
    const platforms: ChatPlatforms = await startChatPlatforms({ discordChannels });
    closers.push(() => platforms.close());

    // The largest level's conversations, answered at once by the worker processes together.
    const concurrency = Math.max(...options.levels, KINDS.length);
    const perWorker = Math.ceil(concurrency / options.workers);
    const env: Record<string, string> = {
      REDIS_URL: redis.url,
      KEY_PREFIX: prefix,
      OPENAI_BASE_URL: tap.url,
      WORKER_CONCURRENCY: String(perWorker),
      HTTP_PORT: "0",
      ...(options.statusReactions ? { STATUS_REACTIONS: "on" } : {}),
      ...platforms.env,
    };
    const entry = roleEntry(REPO_ROOT, options.roles);
    const nodeFlags = { worker: deployedNodeFlags(REPO_ROOT, "worker"), bots: deployedNodeFlags(REPO_ROOT, "bots") };
    progress(`starting ${workersText(options.workers, perWorker)} (${entry.label}) and the bots role…`);
    if (options.cpuProfDir) mkdirSync(options.cpuProfDir, { recursive: true });
    const workers: RoleProcess[] = [];
    for (let i = 0; i < options.workers; i++) {
      const one = await startRoleProcess("worker", env, {
        repoRoot: REPO_ROOT,
        entry,
        extraNodeArgs: nodeFlags.worker,
      });
      workers.push(one);
      closers.push(() => one.stop());
    }
    const worker = workerGroup(workers);
    let botsProcess: RoleProcess | undefined;
    if (options.botsInProcess) {
      const bots = await startBotsInProcess(env);
      closers.push(async () => {
        await bots.close();
        if (bots.warnings > 0) progress(`bots role: ${bots.warnings} warnings, last: ${bots.lastWarning ?? ""}`);
      });
    } else {
      botsProcess = await startRoleProcess("bots", env, { repoRoot: REPO_ROOT, entry, extraNodeArgs: nodeFlags.bots });
      closers.push(() => (botsProcess as RoleProcess).stop());
    }
    const self = createSelfSampler();
    closers.push(async () => self.stop());

    const context: WaveContext = {
      platforms,
      tap,
      redis,
      worker,
      ...(botsProcess ? { botsProcess } : {}),
      workerProcesses: options.workers,
      self,
      rampMs: options.rampMs,
      stallMs: 30_000,
      capMs: 10 * 60_000,
    };
    let nextId = 1;
    const newConversations = (kinds: readonly ChatKind[], words: number): BenchConversation[] =>
      kinds.map((kind) => {
        const c = platforms.conversation(nextId++, kind);
        answerWords.set(c.id, words);
        return c;
      });

    // Every kind, whatever --kinds says: the roles serve all three anyway, and the idle sample stays comparable across runs.
    progress("warming up (one answer per chat kind, not reported)…");
    const warmUp = await runWave(context, newConversations(KINDS, WARM_UP_WORDS), WARM_UP_WORDS);
    if (warmUp.unfinished.length > 0)
      throw new Error(`the warm-up answers did not arrive; worker output:\n${worker.tail()}`);
    const idle = await measureIdle(worker, botsProcess);

    printHeader(options, redis, perWorker, entry, nodeFlags);
    process.stdout.write(`\n${formatIdle(idle)}\n`);
    if (warmUpKinds.length > 0) await warmUpJit(context, options, newConversations(warmUpKinds, options.answerWords));
    const results: LevelFigures[] = [];
    const trace: TraceEntry[] = [];
    for (const [index, level] of options.levels.entries()) {
      const measured = await measureLevel(
        { options, context, worker, platforms, tap, entry, newConversations },
        level,
        plans[index] ?? [],
      );
      results.push(measured.figures);
      if (options.tracePath) trace.push(...measured.trace);
    }
    process.stdout.write(`\n${formatVerdicts(results, idle)}\n`);
    // Prompt tokens per turn of one long conversation, and the share the model server reused (issue 30).
    progress("prompt cache: one conversation of 12 turns…");
    process.stdout.write(`\n${formatPromptCache(await measurePromptCache(redis.url))}\n`);
    if (options.tracePath) {
      writeFileSync(options.tracePath, JSON.stringify(trace, null, 1));
      progress(`timelines written to ${options.tracePath}`);
    }
    return { idle, levels: results };
  } finally {
    process.off("SIGINT", interrupted);
    await cleanup();
  }
}

/**
 * One unreported wave with the levels' answers and kinds, after the idle sample: V8 compiles the worker's
 * hot paths (per token, per request) only once they have run often, and a first wave of 100 conversations
 * spends about a fifth of its CPU doing so. A worker serves for days; the levels measure what it costs
 * then, and this wave's line shows what a new process pays once.
 */
async function warmUpJit(
  context: WaveContext,
  options: BenchOptions,
  conversations: BenchConversation[],
): Promise<void> {
  const count = conversations.length;
  progress(`warming up V8 (${count} conversations, not reported)…`);
  const wave = await runWave(context, conversations, options.answerWords);
  if (wave.unfinished.length > 0)
    throw new Error(
      `${wave.unfinished.length} warm-up answers did not arrive; worker output:\n${context.worker.tail()}`,
    );
  const figures = {
    conversations: count,
    kinds: options.kinds,
    answerWords: options.answerWords,
    workerCpuMicros: wave.worker.cpuMicros,
    ...(wave.botsProcess ? { botsCpuMicros: wave.botsProcess.cpuMicros } : {}),
  };
  process.stdout.write(`${formatWarmUp(figures)}\n`);
}

/** The chat kinds of the JIT warm-up wave's conversations: the levels' kinds in turn. */
function warmUpPlan(options: BenchOptions): ChatKind[] {
  return Array.from(
    { length: options.warmUpConversations },
    (_, i) => options.kinds[i % options.kinds.length] as ChatKind,
  );
}

/** The roles at rest: a settle after the warm-up, then two full GCs and a sample in each role process. */
async function measureIdle(worker: RoleProcess, bots: RoleProcess | undefined): Promise<IdleFigures> {
  progress(`letting the roles settle for ${IDLE_SETTLE_MS / 1000} s, then collecting garbage, for the idle sample…`);
  await sleep(IDLE_SETTLE_MS);
  const [workerSample, botsSample] = await Promise.all([worker.collectGarbage(), bots?.collectGarbage()]);
  const idleOf = (s: ProbeReply): IdleSample => ({
    rssBytes: s.rssBytes,
    maxRssBytes: s.maxRssBytes,
    gcRan: s.gcRan === true,
    ...(s.heapUsedBytes !== undefined ? { heapUsedBytes: s.heapUsedBytes } : {}),
    ...(s.heapTotalBytes !== undefined ? { heapTotalBytes: s.heapTotalBytes } : {}),
  });
  return {
    settleMs: IDLE_SETTLE_MS,
    worker: idleOf(workerSample),
    ...(botsSample ? { bots: idleOf(botsSample) } : {}),
  };
}

/** What measuring one level needs from the run. */
interface LevelRun {
  options: BenchOptions;
  context: WaveContext;
  worker: RoleProcess;
  platforms: ChatPlatforms;
  tap: ModelTap;
  entry: RoleEntry;
  newConversations(kinds: readonly ChatKind[], words: number): BenchConversation[];
}

/** Runs one level's waves and prints its figures (and profile). */
async function measureLevel(
  run: LevelRun,
  level: number,
  waveKinds: readonly (readonly ChatKind[])[],
): Promise<{ figures: LevelFigures; trace: TraceEntry[] }> {
  const { options, context, worker, platforms, tap, entry } = run;
  const words = wordsAt(options, level);
  const waves: WaveTotals[] = [];
  const asked: BenchConversation[] = [];
  if (options.cpuProfDir) await worker.startProfile();
  for (const kinds of waveKinds) {
    progress(
      `level ${level}: ${kinds.length} conversation${kinds.length === 1 ? "" : "s"} (${[...new Set(kinds)].join(", ")})…`,
    );
    const conversations = run.newConversations(kinds, words);
    asked.push(...conversations);
    waves.push(await runWave(context, conversations, words));
  }
  const kinds = options.kinds
    .map((kind) =>
      kindFigures(
        kind,
        asked.filter((c) => c.kind === kind),
        platforms,
        tap,
        words,
      ),
    )
    .filter((k) => k.conversations > 0);
  const profile = options.cpuProfDir ? join(options.cpuProfDir, `worker-level-${level}.cpuprofile`) : undefined;
  if (profile) await worker.stopProfile(profile);
  const machine = { loadAverage: loadavg()[0] ?? 0, cores: availableParallelism(), modelPace: modelPace(asked, tap) };
  const figures = levelFigures(level, words, waves, kinds, machine);
  const pace = machine.modelPace.p50;
  if (pace !== undefined && pace < 0.9 * options.tokensPerSecond) {
    figures.notes.push(
      `the fake model managed ${pace.toFixed(1)} of ${options.tokensPerSecond} tokens/s: the machine was the bound at this level, so its ` +
        "latencies are inflated (CPU per token, peak RSS and Redis per job still hold)",
    );
  }
  const trace = options.tracePath ? traceOf(level, asked, waves, platforms, tap) : [];
  if (worker.warnings > 0) figures.notes.push(`the worker has logged ${worker.warnings} warnings so far`);
  if (profile) figures.notes.push("the worker was being profiled: its CPU figure includes the profiler's overhead");
  if (entry.stale) {
    figures.notes.push(
      "the roles ran src/ through tsx, as dist/ is older than src/: about 30 MB more RSS per process and not the deployed CPU; npm run build, then run again",
    );
  }
  process.stdout.write(`\n${formatLevel(figures)}\n`);
  if (profile) process.stdout.write(`${formatProfileSummary(profile, entry.codeRoot)}\n`);
  return { figures, trace };
}

function printHeader(
  options: BenchOptions,
  redis: BenchRedis,
  perWorker: number,
  entry: RoleEntry,
  nodeFlags: Record<"worker" | "bots", string[]>,
): void {
  const roleFlags = Object.entries(nodeFlags)
    .map(([role, flags]) => `${role} ${flags.join(" ") || "none"}`)
    .join(", ");
  const lines = [
    `npm run bench · fake model at ${options.tokensPerSecond} tokens/s: one tool round (get_weather), then a ${options.answerWords}-word answer` +
      (options.largeLevelWords !== options.answerWords
        ? ` (${options.largeLevelWords} words at 500 and more: see bench/README.md)`
        : ""),
    `questions of a level arrive over ${options.rampMs} ms · ${workersText(options.workers, perWorker)} · ` +
      `bots role ${options.botsInProcess ? "in the benchmark process (its CPU and RSS not measured apart)" : "in its own process"} · fakes in the benchmark process`,
    ...(options.kinds.length < KINDS.length
      ? [`chat kinds: ${options.kinds.map((kind) => KIND_NAMES[kind]).join(", ")} only (--kinds)`]
      : []),
    `role processes run ${entry.label}${entry.note ? ` (${entry.note})` : ""} with docker-compose.yml's node flags: ${roleFlags}`,
    `Redis ${redis.url} ${redis.private ? `(private to this run${redis.note ? `: ${redis.note}` : ""})` : "(shared: its command counts include any other client's; --private-redis for exact ones)"}`,
    "✓ target met · ✗ not met · · no target at this level · ? not measurable in this run; times in ms from the fakes' own records",
  ];
  process.stdout.write(`${lines.join("\n")}\n`);
}

/** "one worker process (WORKER_CONCURRENCY=100)", "2 worker processes sharing the Redis (WORKER_CONCURRENCY=50 each)". */
function workersText(workers: number, perWorker: number): string {
  return workers === 1
    ? `one worker process (WORKER_CONCURRENCY=${perWorker})`
    : `${workers} worker processes sharing the Redis (WORKER_CONCURRENCY=${perWorker} each)`;
}

async function main(): Promise<void> {
  let options: BenchOptions;
  try {
    options = parseBenchArgs(process.argv.slice(2));
  } catch (error) {
    if (error instanceof HelpRequested) {
      process.stdout.write(`${error.message}\n`);
      process.exit(0);
    }
    process.stderr.write(`${(error as Error).message}\n`);
    process.exit(2);
  }
  // The one setting read from the environment, as the bot reads it.
  const redisUrl = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
  try {
    const results = await run(options, redisUrl);
    if (options.jsonPath) {
      writeFileSync(options.jsonPath, JSON.stringify({ options, ...results }, null, 2));
      progress(`figures written to ${options.jsonPath}`);
    }
    process.exit(0);
  } catch (error) {
    process.stderr.write(
      `benchmark failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  }
}

void main();
