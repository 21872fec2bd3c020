/**
 * A BotGateway for adapter tests: records what the adapter offers, dedupes by job id like
 * the real queue, and can be made slow (enqueue waits for `release`) or failing.
 */
import type { BotGateway, EnqueueResult } from "../../../src/contracts/bot-gateway.js";
import { jobIdFor, type InboundMessage } from "../../../src/contracts/inbound-message.js";

/** A recording gateway plus the knobs tests turn. */
export interface RecordingGateway extends BotGateway {
  /** Every enqueue call, in order (including failed and duplicate ones). */
  readonly offered: InboundMessage[];
  /** Messages accepted (first time their job id was seen). */
  readonly queued: InboundMessage[];
  readonly resets: string[];
  readonly stops: string[];
  /** Next enqueue calls throw this many times. */
  failNextEnqueues(n: number): void;
  /** Enqueue calls wait until `release()` is called. */
  hold(): void;
  release(): void;
  /** What the next enqueue answers instead of queueing (e.g. a refusal). */
  answerNext(result: EnqueueResult): void;
  /** Value stop() returns (true = an answer was running). */
  stopResult: boolean;
}

/** Creates a recording gateway. */
export function createRecordingGateway(): RecordingGateway {
  const offered: InboundMessage[] = [];
  const queued: InboundMessage[] = [];
  const seen = new Set<string>();
  const resets: string[] = [];
  const stops: string[] = [];
  let failures = 0;
  let held: Promise<void> | undefined;
  let releaseHeld: (() => void) | undefined;
  const scripted: EnqueueResult[] = [];
  const gateway: RecordingGateway = {
    offered,
    queued,
    resets,
    stops,
    stopResult: false,
    failNextEnqueues(n) {
      failures += n;
    },
    hold() {
      held = new Promise((resolve) => (releaseHeld = resolve));
    },
    release() {
      releaseHeld?.();
      held = undefined;
    },
    answerNext(result) {
      scripted.push(result);
    },
    async enqueue(message) {
      offered.push(message);
      if (held) await held;
      if (failures > 0) {
        failures--;
        throw new Error("Redis is down (test)");
      }
      const next = scripted.shift();
      if (next) return next;
      const jobId = jobIdFor(message);
      if (seen.has(jobId)) return { status: "duplicate", jobId };
      seen.add(jobId);
      queued.push(message);
      return { status: "queued", jobId };
    },
    async reset(key) {
      resets.push(key);
    },
    async stop(key) {
      stops.push(key);
      return gateway.stopResult;
    },
  };
  return gateway;
}
