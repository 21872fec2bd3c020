/**
 * The printed report: one block per level (figures per chat kind, targets next to
 * them, ✓ met / ✗ not met / · no target at this level), then the list of targets
 * not met. Plain text, so it reads the same in a terminal and in a CI log.
 */
import { KIND_NAMES, TARGETS, type KindFigures, type LevelFigures } from "./level-figures.js";

const MB = 1024 * 1024;
const LABEL = 30;
const COLUMN = 27;

/** A target verdict: ✓ met, ✗ not met, ? no figure. */
function mark(value: number | undefined, limit: number): string {
  if (value === undefined) return "?";
  return value <= limit ? "✓" : "✗";
}

const ms = (x: number | undefined): string => (x === undefined ? "–" : String(Math.round(x)));
const pair = (a: number | undefined, b: number | undefined): string => `${ms(a)} / ${ms(b)}`;
const oneDecimal = (x: number | undefined): string => (x === undefined ? "–" : x.toFixed(1));
const pad = (text: string, width: number): string => {
  const length = [...text].length;
  return length >= width ? `${text} ` : text + " ".repeat(width - length);
};

function row(label: string, cells: string[], target: string): string {
  return pad(label, LABEL) + cells.map((c) => pad(c, COLUMN)).join("") + target;
}

/** One verdict the summary lists when it is not met. */
interface Verdict {
  met: boolean;
  text: string;
}

/** The verdicts of one chat kind at one level. */
function kindVerdicts(level: number, k: KindFigures): Verdict[] {
  const name = KIND_NAMES[k.kind];
  const out: Verdict[] = [];
  if (level <= TARGETS.firstSignUpToLevel) {
    out.push({ met: (k.firstSignMs.p50 ?? Infinity) <= TARGETS.firstSignP50Ms, text: `${name}: first sign of life p50 ${ms(k.firstSignMs.p50)} ms (target ≤ ${TARGETS.firstSignP50Ms})` });
    out.push({ met: (k.firstSignMs.p99 ?? Infinity) <= TARGETS.firstSignP99Ms, text: `${name}: first sign of life p99 ${ms(k.firstSignMs.p99)} ms (target ≤ ${TARGETS.firstSignP99Ms})` });
  }
  out.push({ met: (k.freshnessMs.p95 ?? Infinity) <= k.freshnessTargetMs, text: `${name}: freshness p95 ${ms(k.freshnessMs.p95)} ms (target ≤ ${k.freshnessTargetMs})` });
  out.push({
    met: (k.finalBeyondWaitMs.p50 ?? Infinity) <= TARGETS.finalBeyondWaitP50Ms,
    text: `${name}: final text beyond the pacing wait p50 ${ms(k.finalBeyondWaitMs.p50)} ms (target ≤ ${TARGETS.finalBeyondWaitP50Ms})`,
  });
  out.push({ met: k.violations.total === 0, text: `${name}: ${k.violations.total} rate-limit violations (${rules(k)}) (target 0)` });
  if (k.finished < k.conversations) out.push({ met: false, text: `${name}: only ${k.finished} of ${k.conversations} answers became visible in full` });
  if (k.neverShown > 0) out.push({ met: false, text: `${name}: ${k.neverShown} answer words never became visible` });
  return out;
}

function rules(k: KindFigures): string {
  const entries = Object.entries(k.violations.byRule);
  return entries.length === 0 ? "none" : entries.map(([rule, n]) => `${rule} ${n}`).join(", ");
}

/** The verdicts of a level's process figures. */
function levelVerdicts(f: LevelFigures): Verdict[] {
  const redisLimit = TARGETS.redisPerJobBase + f.redis.historyMessages;
  return [
    {
      met: (f.worker.cpuPerTokenMicros ?? Infinity) <= TARGETS.cpuPerTokenMicros,
      text: `worker CPU ${oneDecimal(f.worker.cpuPerTokenMicros)} µs per token (target ≤ ${TARGETS.cpuPerTokenMicros})`,
    },
    { met: f.worker.peakRssBytes <= TARGETS.peakRssBytes, text: `worker peak RSS ${Math.round(f.worker.peakRssBytes / MB)} MB (target ≤ 250)` },
    ...(f.botsProcess
      ? [{ met: f.botsProcess.peakRssBytes <= TARGETS.peakRssBytes, text: `bots process peak RSS ${Math.round(f.botsProcess.peakRssBytes / MB)} MB (target ≤ 250)` }]
      : []),
    { met: (f.redis.perJob ?? Infinity) <= redisLimit, text: `${oneDecimal(f.redis.perJob)} Redis commands per job (target ≤ ${redisLimit})` },
  ];
}

/** The block of one level. */
export function formatLevel(f: LevelFigures): string {
  const lines: string[] = [];
  const mix = f.kinds.map((k) => `${k.conversations} ${KIND_NAMES[k.kind]}`).join(", ");
  const waves = f.waves > 1 ? ` in ${f.waves} waves of ${f.level}` : "";
  lines.push(`━━ ${f.level} concurrent conversation${f.level === 1 ? "" : "s"}${waves} · ${mix} · ${f.answerWords}-word answers · ${(f.wallMs / 1000).toFixed(1)} s`);
  lines.push(row("", f.kinds.map((k) => KIND_NAMES[k.kind]), "target"));
  const firstSignJudged = f.level <= TARGETS.firstSignUpToLevel;
  const cells = (render: (k: KindFigures) => string) => f.kinds.map(render);
  lines.push(
    row(
      "first sign of life p50/p99 ms",
      cells((k) => `${pair(k.firstSignMs.p50, k.firstSignMs.p99)} ${firstSignJudged ? mark(k.firstSignMs.p50, TARGETS.firstSignP50Ms) + mark(k.firstSignMs.p99, TARGETS.firstSignP99Ms) : "·"}`),
      `≤ ${TARGETS.firstSignP50Ms} / ≤ ${TARGETS.firstSignP99Ms}${firstSignJudged ? "" : ` (stated up to ${TARGETS.firstSignUpToLevel})`}`,
    ),
  );
  lines.push(
    row(
      "freshness p50/p95 ms",
      cells((k) => `${pair(k.freshnessMs.p50, k.freshnessMs.p95)} ${mark(k.freshnessMs.p95, k.freshnessTargetMs)} (≤ ${k.freshnessTargetMs})`),
      "p95 ≤ interval + 100; drafts ≤ 400",
    ),
  );
  lines.push(row("final visible p50/p99 ms", cells((k) => pair(k.finalMs.p50, k.finalMs.p99)), "— (includes pacing waits)"));
  lines.push(
    row(
      "  beyond pacing wait p50/p99",
      cells((k) => `${pair(k.finalBeyondWaitMs.p50, k.finalBeyondWaitMs.p99)} ${mark(k.finalBeyondWaitMs.p50, TARGETS.finalBeyondWaitP50Ms)}`),
      `p50 ≤ ${TARGETS.finalBeyondWaitP50Ms}`,
    ),
  );
  lines.push(row("  no wait due: n, p50 ms", cells((k) => `${k.finalNoWaitMs.n}, ${ms(k.finalNoWaitMs.p50)}`), `p50 ≤ ${TARGETS.finalBeyondWaitP50Ms}`));
  lines.push(
    row(
      "sends / edits / drafts per reply",
      cells((k) => `${oneDecimal(k.perReply.sends)} / ${oneDecimal(k.perReply.edits)} / ${oneDecimal(k.perReply.drafts)}`),
      "—",
    ),
  );
  lines.push(row("rate-limit violations", cells((k) => `${k.violations.total} ${mark(k.violations.total, TARGETS.violations)}${k.violations.total ? ` (${rules(k)})` : ""}`), "0"));
  lines.push(row("answers complete", cells((k) => `${k.finished}/${k.conversations}${k.neverShown ? `, ${k.neverShown} words unseen` : ""}`), ""));
  const w = f.worker;
  lines.push(
    `worker    ${oneDecimal(w.cpuPerTokenMicros)} µs CPU per token ${mark(w.cpuPerTokenMicros, TARGETS.cpuPerTokenMicros)} (≤ ${TARGETS.cpuPerTokenMicros})` +
      (w.systemShare !== undefined ? `, ${Math.round(w.systemShare * 100)}% in the kernel` : "") +
      ` · peak RSS ${Math.round(w.peakRssBytes / MB)} MB ${mark(w.peakRssBytes, TARGETS.peakRssBytes)} (≤ 250)` +
      ` · ${w.coresBusy.toFixed(2)} cores busy · loop delay p99 ${ms(w.loopDelayP99Ms)} ms · ${f.tokens} tokens streamed`,
  );
  if (f.botsProcess) {
    lines.push(
      `bots      peak RSS ${Math.round(f.botsProcess.peakRssBytes / MB)} MB ${mark(f.botsProcess.peakRssBytes, TARGETS.peakRssBytes)} (≤ 250)` +
        ` · ${f.botsProcess.coresBusy.toFixed(2)} cores busy · loop delay p99 ${ms(f.botsProcess.loopDelayP99Ms)} ms`,
    );
  }
  lines.push(
    `bench     ${f.botsProcess ? "(fakes + model tap)" : "(fakes + model tap + bots role)"} peak RSS ${Math.round(f.bench.peakRssBytes / MB)} MB` +
      ` · ${f.bench.coresBusy.toFixed(2)} cores busy · loop delay p99 ${ms(f.bench.loopDelayP99Ms)} ms`,
  );
  const pace = f.machine.modelPace;
  lines.push(
    `machine   load average ${f.machine.loadAverage.toFixed(1)} on ${f.machine.cores} cores` +
      ` · fake model pace p50 ${oneDecimal(pace.p50)} tokens/s, slowest 5% under ${oneDecimal(pace.p5)}`,
  );
  const redisLimit = TARGETS.redisPerJobBase + f.redis.historyMessages;
  lines.push(
    `redis     ${oneDecimal(f.redis.perJob)} commands per job ${mark(f.redis.perJob, redisLimit)} (≤ 40 + history ${f.redis.historyMessages})` +
      (f.redis.perJobSplit ? ` = ${oneDecimal(f.redis.perJobSplit.client)} sent + ${oneDecimal(f.redis.perJobSplit.lua)} inside Lua scripts` : "") +
      ` · ${f.redis.top.map(([name, perJob]) => `${name} ${perJob.toFixed(1)}`).join(", ")}`,
  );
  const outcomes = Object.entries(f.jobs.outcomes).map(([outcome, n]) => `${outcome} ${n}`).join(", ");
  const wait = f.jobs.queueWaitMs.n > 0 ? ` · adapter → job start p50/p99 ${pair(f.jobs.queueWaitMs.p50, f.jobs.queueWaitMs.p99)} ms` : "";
  lines.push(`jobs      ${f.jobs.asked} asked · outcomes: ${outcomes || "none logged"}${f.jobs.unfinished ? ` · ${f.jobs.unfinished} unfinished` : ""}${wait}`);
  for (const note of f.notes) lines.push(`note      ${note}`);
  return lines.join("\n");
}

/** The closing list of targets not met, level by level. */
export function formatVerdicts(levels: readonly LevelFigures[]): string {
  const lines: string[] = [];
  let all = 0;
  for (const f of levels) {
    const verdicts = [...f.kinds.flatMap((k) => kindVerdicts(f.level, k)), ...levelVerdicts(f)];
    all += verdicts.length;
    for (const v of verdicts) if (!v.met) lines.push(`  ✗ level ${f.level}: ${v.text}`);
  }
  const missed = lines.length;
  return [`Targets: ${all - missed} of ${all} met.${missed ? " Not met:" : ""}`, ...lines].join("\n");
}
