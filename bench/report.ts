/**
 * The printed report: the roles at rest, then one block per level (figures per chat kind,
 * targets next to them, ✓ met / ✗ not met / · no target at this level / ? not measurable in
 * this run), then the list of targets not met. Plain text, so it reads the same in a
 * terminal and in a CI log.
 */
import {
  KIND_NAMES,
  TARGETS,
  limitAt,
  type CpuPerReply,
  type IdleFigures,
  type IdleSample,
  type KindFigures,
  type LevelFigures,
  type LevelLimit,
} from "./level-figures.js";
import type { ChatKind } from "./conversation-figures.js";

const MB = 1024 * 1024;
const LABEL = 33;
const COLUMN = 27;

/** A target verdict: ✓ met, ✗ not met, ? no figure. */
function mark(value: number | undefined, limit: number): string {
  if (value === undefined) return "?";
  return value <= limit ? "✓" : "✗";
}

/** ✓ met, ✗ not met, ? not measurable. */
const metMark = (met: boolean | undefined): string => (met === undefined ? "?" : met ? "✓" : "✗");

/** The verdict against a limit stated at some levels: `✓ (≤ 60)` at those, `· (≤ 60 at 100)` at the others. */
function levelMark(value: number | undefined, limits: readonly LevelLimit[], level: number): string {
  const limit = limitAt(limits, level);
  if (limit !== undefined) return `${mark(value, limit)} (≤ ${limit})`;
  return `· (${limits.map((l) => `≤ ${l.limit} at ${l.level}`).join(", ")})`;
}

const ms = (x: number | undefined): string => (x === undefined ? "–" : String(Math.round(x)));
const pair = (a: number | undefined, b: number | undefined): string => `${ms(a)} / ${ms(b)}`;
const oneDecimal = (x: number | undefined): string => (x === undefined ? "–" : x.toFixed(1));
const mb = (bytes: number): number => bytes / MB;
const mbText = (bytes: number): string => `${Math.round(mb(bytes))} MB`;
const pad = (text: string, width: number): string => {
  const length = [...text].length;
  return length >= width ? `${text} ` : text + " ".repeat(width - length);
};

function row(label: string, cells: string[], target: string): string {
  return pad(label, LABEL) + cells.map((c) => pad(c, COLUMN)).join("") + target;
}

/** One verdict the summary lists when it is not met; `met` undefined: the figure could not be measured in this run. */
interface Verdict {
  met: boolean | undefined;
  text: string;
}

/** The verdicts of one chat kind at one level. */
function kindVerdicts(level: number, k: KindFigures): Verdict[] {
  const name = KIND_NAMES[k.kind];
  const out: Verdict[] = [];
  if (level <= TARGETS.firstSignUpToLevel) {
    out.push({
      met: (k.firstSignMs.p50 ?? Infinity) <= TARGETS.firstSignP50Ms,
      text: `${name}: first sign of life p50 ${ms(k.firstSignMs.p50)} ms (target ≤ ${TARGETS.firstSignP50Ms})`,
    });
    out.push({
      met: (k.firstSignMs.p99 ?? Infinity) <= TARGETS.firstSignP99Ms,
      text: `${name}: first sign of life p99 ${ms(k.firstSignMs.p99)} ms (target ≤ ${TARGETS.firstSignP99Ms})`,
    });
  }
  out.push({
    met: (k.freshnessMs.p95 ?? Infinity) <= k.freshnessTargetMs,
    text: `${name}: freshness p95 ${ms(k.freshnessMs.p95)} ms (target ≤ ${k.freshnessTargetMs})`,
  });
  out.push({
    met: (k.finalBeyondWaitMs.p50 ?? Infinity) <= TARGETS.finalBeyondWaitP50Ms,
    text: `${name}: final text beyond the pacing wait p50 ${ms(k.finalBeyondWaitMs.p50)} ms (target ≤ ${TARGETS.finalBeyondWaitP50Ms})`,
  });
  out.push({
    met: k.violations.total === 0,
    text: `${name}: ${k.violations.total} rate-limit violations (${rules(k)}) (target 0)`,
  });
  if (k.finished < k.conversations)
    out.push({ met: false, text: `${name}: only ${k.finished} of ${k.conversations} answers became visible in full` });
  if (k.neverShown > 0) out.push({ met: false, text: `${name}: ${k.neverShown} answer words never became visible` });
  return out;
}

function rules(k: KindFigures): string {
  const entries = Object.entries(k.violations.byRule);
  return entries.length === 0 ? "none" : entries.map(([rule, n]) => `${rule} ${n}`).join(", ");
}

/**
 * Worker + bots CPU per reply against a strict limit. Without a bots process only the
 * worker's share is known: that alone can fail the target, but never pass it.
 */
export function cpuPerReplyMet(figure: CpuPerReply, limit: number): boolean | undefined {
  if (figure.botsMs === undefined) return figure.workerMs >= limit ? false : undefined;
  return figure.totalMs < limit;
}

/** The Telegram private CPU-per-reply verdict: only where that kind had the processes to itself and a limit is stated. */
function cpuPerReplyVerdicts(f: LevelFigures): Verdict[] {
  const limit = limitAt(TARGETS.tgPrivateCpuPerReplyMs, f.level);
  const figure = f.cpuPerReplyByKind["tg-private"];
  if (limit === undefined || !figure) return [];
  const name = KIND_NAMES["tg-private"];
  const text =
    figure.botsMs === undefined
      ? `${name}: worker + bots CPU per reply not measured (the bots role ran in the benchmark process; the worker alone used ${oneDecimal(figure.workerMs)} ms) (target < ${limit})`
      : `${name}: worker + bots CPU ${oneDecimal(figure.totalMs)} ms per reply (target < ${limit})`;
  return [{ met: cpuPerReplyMet(figure, limit), text }];
}

/** The verdicts of a level's process figures, where a limit is stated at this level. */
function levelVerdicts(f: LevelFigures): Verdict[] {
  const out: Verdict[] = [];
  const cpuLimit = limitAt(TARGETS.workerCpuPerTokenMicros, f.level);
  if (cpuLimit !== undefined) {
    out.push({
      met: (f.worker.cpuPerTokenMicros ?? Infinity) <= cpuLimit,
      text: `worker CPU ${oneDecimal(f.worker.cpuPerTokenMicros)} µs per token (target ≤ ${cpuLimit})`,
    });
  }
  const workerRss = limitAt(TARGETS.workerPeakRssMb, f.level);
  if (workerRss !== undefined)
    out.push({
      met: mb(f.worker.peakRssBytes) <= workerRss,
      text: `worker peak RSS ${mbText(f.worker.peakRssBytes)} (target ≤ ${workerRss})`,
    });
  const botsRss = limitAt(TARGETS.botsPeakRssMb, f.level);
  if (botsRss !== undefined) {
    out.push(
      f.botsProcess
        ? {
            met: mb(f.botsProcess.peakRssBytes) <= botsRss,
            text: `bots process peak RSS ${mbText(f.botsProcess.peakRssBytes)} (target ≤ ${botsRss})`,
          }
        : {
            met: undefined,
            text: `bots role peak RSS not measured: it ran in the benchmark process (target ≤ ${botsRss})`,
          },
    );
  }
  const redisLimit = limitAt(TARGETS.redisPerJob, f.level);
  if (redisLimit !== undefined)
    out.push({
      met: (f.redis.perJob ?? Infinity) <= redisLimit,
      text: `${oneDecimal(f.redis.perJob)} Redis commands per job (target ≤ ${redisLimit})`,
    });
  return [...out, ...cpuPerReplyVerdicts(f)];
}

/** The verdicts of the idle sample. */
function idleVerdicts(idle: IdleFigures): Verdict[] {
  const limit = TARGETS.botsIdleRssMb;
  if (!idle.bots)
    return [
      { met: undefined, text: `bots role idle RSS not measured: it ran in the benchmark process (target ≤ ${limit})` },
    ];
  return [
    {
      met: mb(idle.bots.rssBytes) <= limit,
      text: `bots process idle RSS ${mbText(idle.bots.rssBytes)} (target ≤ ${limit})`,
    },
  ];
}

/** The cell of the CPU-per-reply row for a kind: worker + bots where the kind ran alone. */
function cpuPerReplyCell(f: LevelFigures, k: KindFigures): string {
  const figure = f.cpuPerReplyByKind[k.kind];
  if (!figure) return "– (kinds mixed)";
  const limit = k.kind === "tg-private" ? limitAt(TARGETS.tgPrivateCpuPerReplyMs, f.level) : undefined;
  const verdict = limit === undefined ? "" : ` ${metMark(cpuPerReplyMet(figure, limit))}`;
  if (figure.botsMs === undefined) return `${oneDecimal(figure.workerMs)} worker only${verdict}`;
  return `${oneDecimal(figure.totalMs)} = ${oneDecimal(figure.workerMs)} + ${oneDecimal(figure.botsMs)}${verdict}`;
}

/** The per-kind table of a level. */
function kindTable(f: LevelFigures): string[] {
  const lines: string[] = [];
  lines.push(
    row(
      "",
      f.kinds.map((k) => KIND_NAMES[k.kind]),
      "target",
    ),
  );
  const firstSignJudged = f.level <= TARGETS.firstSignUpToLevel;
  const cells = (render: (k: KindFigures) => string) => f.kinds.map(render);
  lines.push(
    row(
      "first sign of life p50/p99 ms",
      cells(
        (k) =>
          `${pair(k.firstSignMs.p50, k.firstSignMs.p99)} ${firstSignJudged ? mark(k.firstSignMs.p50, TARGETS.firstSignP50Ms) + mark(k.firstSignMs.p99, TARGETS.firstSignP99Ms) : "·"}`,
      ),
      `≤ ${TARGETS.firstSignP50Ms} / ≤ ${TARGETS.firstSignP99Ms}${firstSignJudged ? "" : ` (stated up to ${TARGETS.firstSignUpToLevel})`}`,
    ),
  );
  lines.push(
    row(
      "first word visible p50/p99 ms",
      cells((k) => pair(k.firstWordMs.p50, k.firstWordMs.p99)),
      "— (question → first answer word shown)",
    ),
  );
  lines.push(
    row(
      "freshness p50/p95 ms",
      cells(
        (k) =>
          `${pair(k.freshnessMs.p50, k.freshnessMs.p95)} ${mark(k.freshnessMs.p95, k.freshnessTargetMs)} (≤ ${k.freshnessTargetMs})`,
      ),
      "p95 ≤ interval + 100; drafts ≤ 400",
    ),
  );
  lines.push(
    row(
      "final visible p50/p99 ms",
      cells((k) => pair(k.finalMs.p50, k.finalMs.p99)),
      "— (includes pacing waits)",
    ),
  );
  lines.push(
    row(
      "  beyond pacing wait p50/p99",
      cells(
        (k) =>
          `${pair(k.finalBeyondWaitMs.p50, k.finalBeyondWaitMs.p99)} ${mark(k.finalBeyondWaitMs.p50, TARGETS.finalBeyondWaitP50Ms)}`,
      ),
      `p50 ≤ ${TARGETS.finalBeyondWaitP50Ms}`,
    ),
  );
  lines.push(
    row(
      "  no wait due: n, p50 ms",
      cells((k) => `${k.finalNoWaitMs.n}, ${ms(k.finalNoWaitMs.p50)}`),
      `p50 ≤ ${TARGETS.finalBeyondWaitP50Ms}`,
    ),
  );
  lines.push(
    row(
      "sends / edits / drafts per reply",
      cells(
        (k) => `${oneDecimal(k.perReply.sends)} / ${oneDecimal(k.perReply.edits)} / ${oneDecimal(k.perReply.drafts)}`,
      ),
      "—",
    ),
  );
  const cpuLimits = TARGETS.tgPrivateCpuPerReplyMs.map((l) => `< ${l.limit} at ${l.level}`).join(", ");
  lines.push(
    row(
      "CPU per reply ms, worker + bots",
      cells((k) => cpuPerReplyCell(f, k)),
      `Telegram private alone: ${cpuLimits}`,
    ),
  );
  lines.push(
    row(
      "rate-limit violations",
      cells(
        (k) =>
          `${k.violations.total} ${mark(k.violations.total, TARGETS.violations)}${k.violations.total ? ` (${rules(k)})` : ""}`,
      ),
      "0",
    ),
  );
  lines.push(
    row(
      "answers complete",
      cells((k) => `${k.finished}/${k.conversations}${k.neverShown ? `, ${k.neverShown} words unseen` : ""}`),
      "",
    ),
  );
  return lines;
}

/** The level's CPU per reply over every reply, kinds together. */
function perReplyLine(f: LevelFigures): string {
  const c = f.cpuPerReply;
  if (!c) return "per reply no replies";
  const scope =
    f.kinds.length === 1 ? `${KIND_NAMES[f.kinds[0]?.kind ?? "tg-private"]} alone` : "every kind of the level together";
  if (c.botsMs === undefined) {
    return `per reply ${oneDecimal(c.workerMs)} ms worker CPU, worker only (the bots role runs in the benchmark process: --bots-process measures it) · ${scope}`;
  }
  return `per reply ${oneDecimal(c.totalMs)} ms CPU = ${oneDecimal(c.workerMs)} worker + ${oneDecimal(c.botsMs)} bots · ${scope}`;
}

/** The lines of the processes: worker, bots, the benchmark itself, the machine, Redis, the jobs. */
function processLines(f: LevelFigures): string[] {
  const lines: string[] = [];
  const w = f.worker;
  lines.push(
    `worker    ${oneDecimal(w.cpuPerTokenMicros)} µs CPU per token ${levelMark(w.cpuPerTokenMicros, TARGETS.workerCpuPerTokenMicros, f.level)}` +
      (w.systemShare !== undefined ? `, ${Math.round(w.systemShare * 100)}% in the kernel` : "") +
      ` · peak RSS ${mbText(w.peakRssBytes)} ${levelMark(mb(w.peakRssBytes), TARGETS.workerPeakRssMb, f.level)}` +
      ` · ${w.coresBusy.toFixed(2)} cores busy · loop delay p99 ${ms(w.loopDelayP99Ms)} ms · ${f.tokens} tokens streamed`,
  );
  if (f.botsProcess) {
    lines.push(
      `bots      peak RSS ${mbText(f.botsProcess.peakRssBytes)} ${levelMark(mb(f.botsProcess.peakRssBytes), TARGETS.botsPeakRssMb, f.level)}` +
        ` · ${f.botsProcess.coresBusy.toFixed(2)} cores busy · loop delay p99 ${ms(f.botsProcess.loopDelayP99Ms)} ms`,
    );
  } else {
    const limit = limitAt(TARGETS.botsPeakRssMb, f.level);
    lines.push(
      `bots      in the benchmark process: no CPU or RSS figure of its own${limit !== undefined ? ` ? (peak RSS ≤ ${limit})` : ""}`,
    );
  }
  lines.push(perReplyLine(f));
  lines.push(
    `bench     ${f.botsProcess ? "(fakes + model tap)" : "(fakes + model tap + bots role)"} peak RSS ${mbText(f.bench.peakRssBytes)}` +
      ` · ${f.bench.coresBusy.toFixed(2)} cores busy · loop delay p99 ${ms(f.bench.loopDelayP99Ms)} ms`,
  );
  const pace = f.machine.modelPace;
  lines.push(
    `machine   load average ${f.machine.loadAverage.toFixed(1)} on ${f.machine.cores} cores` +
      ` · fake model pace p50 ${oneDecimal(pace.p50)} tokens/s, slowest 5% under ${oneDecimal(pace.p5)}`,
  );
  lines.push(
    `redis     ${oneDecimal(f.redis.perJob)} commands per job` +
      (f.redis.perJobSplit
        ? ` = ${oneDecimal(f.redis.perJobSplit.client)} sent + ${oneDecimal(f.redis.perJobSplit.lua)} inside Lua scripts`
        : " (sent + inside Lua scripts)") +
      ` ${levelMark(f.redis.perJob, TARGETS.redisPerJob, f.level)} · history ${f.redis.historyMessages} · ${f.redis.top.map(([name, perJob]) => `${name} ${perJob.toFixed(1)}`).join(", ")}`,
  );
  const outcomes = Object.entries(f.jobs.outcomes)
    .map(([outcome, n]) => `${outcome} ${n}`)
    .join(", ");
  const wait =
    f.jobs.queueWaitMs.n > 0
      ? ` · adapter → job start p50/p99 ${pair(f.jobs.queueWaitMs.p50, f.jobs.queueWaitMs.p99)} ms`
      : "";
  lines.push(
    `jobs      ${f.jobs.asked} asked · outcomes: ${outcomes || "none logged"}${f.jobs.unfinished ? ` · ${f.jobs.unfinished} unfinished` : ""}${wait}`,
  );
  return lines;
}

/** The block of one level. */
export function formatLevel(f: LevelFigures): string {
  const mix = f.kinds.map((k) => `${k.conversations} ${KIND_NAMES[k.kind]}`).join(", ");
  const waves = f.waves > 1 ? ` in ${f.waves} waves of ${f.level}` : "";
  return [
    `━━ ${f.level} concurrent conversation${f.level === 1 ? "" : "s"}${waves} · ${mix} · ${f.answerWords}-word answers · ${(f.wallMs / 1000).toFixed(1)} s`,
    ...kindTable(f),
    ...processLines(f),
    ...f.notes.map((note) => `note      ${note}`),
  ].join("\n");
}

/** One role at rest: RSS (with its verdict, if any), the V8 heap after the GC, the high-water mark. */
function idleSampleText(s: IdleSample, verdict = ""): string {
  const committed = s.heapTotalBytes !== undefined ? `${Math.round(mb(s.heapTotalBytes))} MB committed, ` : "";
  const heap =
    s.heapUsedBytes !== undefined ? ` · V8 heap ${committed}${Math.round(mb(s.heapUsedBytes))} MB in use` : "";
  const gc = s.gcRan ? "" : " (no GC: the probe could not trigger one)";
  return `RSS ${mbText(s.rssBytes)}${verdict}${gc}${heap} · high-water mark since start ${mbText(s.maxRssBytes)}`;
}

/** The block of the roles at rest, before the first level. */
export function formatIdle(idle: IdleFigures): string {
  const limit = TARGETS.botsIdleRssMb;
  return [
    `━━ idle · after the warm-up, ${(idle.settleMs / 1000).toFixed(1)} s to settle and two full GCs in each role process`,
    `worker    ${idleSampleText(idle.worker)} · no idle target`,
    idle.bots
      ? `bots      ${idleSampleText(idle.bots, ` ${mark(mb(idle.bots.rssBytes), limit)} (≤ ${limit})`)}`
      : `bots      in the benchmark process: no RSS of its own ? (≤ ${limit}; run without --bots-in-process)`,
  ].join("\n");
}

/** What the unreported JIT warm-up wave cost: a cold process pays this once, the levels after it do not. */
export interface WarmUpFigures {
  conversations: number;
  kinds: readonly ChatKind[];
  answerWords: number;
  /** CPU of each role process over the wave, in µs (bots undefined when it runs in the benchmark process). */
  workerCpuMicros: number;
  botsCpuMicros?: number;
}

/** The line of the warm-up wave (context only: no target is judged on it). */
export function formatWarmUp(w: WarmUpFigures): string {
  const perReply = (micros: number) => (micros / 1000 / Math.max(1, w.conversations)).toFixed(1);
  const bots = w.botsCpuMicros !== undefined ? ` + ${perReply(w.botsCpuMicros)} bots` : " (worker only)";
  return (
    `warm-up   ${w.conversations} conversations (${w.kinds.map((kind) => KIND_NAMES[kind]).join(", ")}) · ${w.answerWords}-word answers · not a level: ` +
    `${perReply(w.workerCpuMicros)} ms worker${bots} CPU per reply while V8 compiles the hot paths (a new process pays this once)`
  );
}

/** The closing list of targets not met (and not measurable), the idle sample first, then level by level. */
export function formatVerdicts(levels: readonly LevelFigures[], idle?: IdleFigures): string {
  const judged: { label: string; verdict: Verdict }[] = [
    ...(idle ? idleVerdicts(idle).map((verdict) => ({ label: "idle", verdict })) : []),
    ...levels.flatMap((f) =>
      [...f.kinds.flatMap((k) => kindVerdicts(f.level, k)), ...levelVerdicts(f)].map((verdict) => ({
        label: `level ${f.level}`,
        verdict,
      })),
    ),
  ];
  const missed = judged.filter((j) => j.verdict.met === false);
  const unmeasured = judged.filter((j) => j.verdict.met === undefined);
  const measured = judged.length - unmeasured.length;
  const head =
    `Targets: ${measured - missed.length} of ${measured} met` +
    (unmeasured.length ? `, ${unmeasured.length} not measurable in this run` : "") +
    `.${missed.length ? " Not met:" : ""}`;
  return [
    head,
    ...missed.map((j) => `  ✗ ${j.label}: ${j.verdict.text}`),
    ...unmeasured.map((j) => `  ? ${j.label}: ${j.verdict.text}`),
  ].join("\n");
}
