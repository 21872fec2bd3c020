/** The command line of `npm run bench` (see bench/README.md). */
import { KINDS, type ChatKind } from "./conversation-figures.js";

/** What a run measures and how. */
export interface BenchOptions {
  /** Concurrent conversations per level. */
  levels: number[];
  /** Words (= streamed deltas) of each answer. */
  answerWords: number;
  /** Answer words at levels of 500 and more, where two cores are the bound (see README). */
  largeLevelWords: number;
  /** The fake model's generation speed. */
  tokensPerSecond: number;
  /** Questions of a level arrive spread evenly over this long. */
  rampMs: number;
  /** Start a private redis-server (exact command counts even when others use the shared Redis). */
  privateRedis: boolean;
  /** Watch Redis with MONITOR to split commands into round trips and Lua-script internals (costs CPU). */
  redisMonitor: boolean;
  /** Chat kinds the levels' conversations rotate over (one kind alone separates its CPU per reply). */
  kinds: ChatKind[];
  /**
   * Conversations of the unreported wave that runs after the idle sample and before the first level, with
   * the levels' answers and kinds, so the levels measure code V8 has already compiled (0: none).
   */
  warmUpConversations: number;
  /**
   * Run the bots role inside the benchmark process instead of its own process (the default),
   * where its CPU and memory cannot be told from the fakes'.
   */
  botsInProcess: boolean;
  /** How role processes start: "auto" (dist/ when current, else tsx), "tsx", or a build directory. */
  roles: string;
  /** Worker role processes sharing the Redis; the largest level's concurrency is split between them. */
  workers: number;
  /** Write a V8 CPU profile of the worker process per level into this directory. */
  cpuProfDir?: string;
  /** STATUS_REACTIONS=on in the roles: every question also gets 👀 → 🔧/👨‍💻 → ✅/👌 (their 429s count as violations). */
  statusReactions: boolean;
  /** Also write every figure as JSON here. */
  jsonPath?: string;
  /** Write every conversation's raw timeline (deliveries, model stream, requests) as JSON here. */
  tracePath?: string;
  quick: boolean;
}

/** Defaults of a full run. */
export const DEFAULT_OPTIONS: BenchOptions = {
  levels: [1, 10, 100, 500],
  answerWords: 300,
  largeLevelWords: 300,
  tokensPerSecond: 40,
  rampMs: 2000,
  privateRedis: false,
  redisMonitor: false,
  kinds: [...KINDS],
  warmUpConversations: 100,
  botsInProcess: false,
  roles: "auto",
  workers: 1,
  statusReactions: false,
  quick: false,
};

/** `--quick`: levels 1 and 10 with short answers, for a run in well under a minute. */
const QUICK: Partial<BenchOptions> = {
  levels: [1, 10],
  answerWords: 60,
  largeLevelWords: 60,
  rampMs: 500,
  warmUpConversations: 10,
  quick: true,
};

export const USAGE = `usage: npm run bench -- [options]
  --levels 1,10,100,500   concurrent conversations per level
  --quick                 levels 1,10 with 60-word answers (a fast check)
  --words N               words (streamed deltas) per answer (default 300)
  --large-words N         words per answer at levels >= 500 (default 300)
  --tps N                 the fake model's tokens per second (default 40)
  --ramp-ms N             questions of a level arrive over this long (default 2000)
  --private-redis         start a private redis-server for exact command counts
  --redis-monitor         split Redis commands into round trips and Lua-script internals (MONITOR)
  --kinds K,K             chat kinds to rotate over: tg-private, tg-group, discord (default all three)
  --warm-up N             conversations of the unreported JIT warm-up wave before the first level
                          (default 100, 10 with --quick; 0 for none: the levels then pay for compiling)
  --bots-process          run the bots role as its own process (the default: its CPU and RSS are measured)
  --bots-in-process       run the bots role inside this process (no CPU or RSS figure of its own)
  --workers N             worker processes sharing the Redis (default 1); each takes
                          WORKER_CONCURRENCY = the largest level / N, rounded up
  --roles auto|tsx|DIR    role processes from dist/ when it is current (auto), src/ through tsx,
                          or a build directory holding main.js
  --status-reactions      run with STATUS_REACTIONS=on (status reactions on every question)
  --cpu-prof DIR          profile the worker's CPU per level into DIR and summarise it
  --json FILE             also write every figure as JSON
  --trace FILE            write every conversation's timeline as JSON (for digging into a figure)`;

/** Parses argv (without node and the script); throws with the usage on a mistake. */
export function parseBenchArgs(argv: readonly string[]): BenchOptions {
  const options: BenchOptions = { ...DEFAULT_OPTIONS };
  if (argv.includes("--quick")) Object.assign(options, QUICK);
  const positive = (flag: string, value: string | undefined): number => {
    const n = Number(value);
    if (!value || !Number.isInteger(n) || n <= 0) throw new Error(`${flag} needs a positive whole number\n${USAGE}`);
    return n;
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i] as string;
    switch (flag) {
      case "--quick":
        break;
      case "--levels": {
        const value = argv[++i] ?? "";
        options.levels = value.split(",").map((part) => positive("--levels", part.trim()));
        break;
      }
      case "--words":
        options.answerWords = positive(flag, argv[++i]);
        if (!argv.includes("--large-words")) options.largeLevelWords = options.answerWords;
        break;
      case "--large-words":
        options.largeLevelWords = positive(flag, argv[++i]);
        break;
      case "--tps":
        options.tokensPerSecond = positive(flag, argv[++i]);
        break;
      case "--ramp-ms":
        options.rampMs = positive(flag, argv[++i]);
        break;
      case "--private-redis":
        options.privateRedis = true;
        break;
      case "--redis-monitor":
        options.redisMonitor = true;
        break;
      case "--kinds":
        options.kinds = parseKinds(argv[++i]);
        break;
      case "--warm-up": {
        const value = argv[++i];
        const n = Number(value);
        if (!value || !Number.isInteger(n) || n < 0)
          throw new Error(`--warm-up needs a whole number (0 for none)\n${USAGE}`);
        options.warmUpConversations = n;
        break;
      }
      case "--status-reactions":
        options.statusReactions = true;
        break;
      case "--bots-process":
        options.botsInProcess = false;
        break;
      case "--bots-in-process":
        options.botsInProcess = true;
        break;
      case "--workers":
        options.workers = positive(flag, argv[++i]);
        break;
      case "--roles": {
        const value = argv[++i];
        if (!value) throw new Error(`--roles needs auto, tsx or a directory\n${USAGE}`);
        options.roles = value;
        break;
      }
      case "--cpu-prof": {
        const dir = argv[++i];
        if (!dir) throw new Error(`--cpu-prof needs a directory\n${USAGE}`);
        options.cpuProfDir = dir;
        break;
      }
      case "--json": {
        const path = argv[++i];
        if (!path) throw new Error(`--json needs a file name\n${USAGE}`);
        options.jsonPath = path;
        break;
      }
      case "--trace": {
        const path = argv[++i];
        if (!path) throw new Error(`--trace needs a file name\n${USAGE}`);
        options.tracePath = path;
        break;
      }
      case "--help":
      case "-h":
        throw new HelpRequested(USAGE);
      default:
        throw new Error(`unknown option ${flag}\n${USAGE}`);
    }
  }
  return options;
}

/** `--kinds`: known kinds, each once, in table order. */
function parseKinds(value: string | undefined): ChatKind[] {
  const asked = (value ?? "")
    .split(",")
    .map((part) => part.trim())
    .filter((part) => part !== "");
  const unknown = asked.filter((part) => !(KINDS as readonly string[]).includes(part));
  if (asked.length === 0 || unknown.length > 0) {
    throw new Error(
      `--kinds takes a comma-separated list of ${KINDS.join(", ")}${unknown.length ? ` (not ${unknown.join(", ")})` : ""}\n${USAGE}`,
    );
  }
  return KINDS.filter((kind) => asked.includes(kind));
}

/** Answer words at a level. */
export function wordsAt(options: BenchOptions, level: number): number {
  return level >= 500 ? options.largeLevelWords : options.answerWords;
}

/** `--help`: not a mistake; the usage goes to stdout and the exit code is 0. */
export class HelpRequested extends Error {
  override readonly name = "HelpRequested";
}
