/**
 * The repair sweep puts stuck conversations back in motion: a head that never reached BullMQ is re-added,
 * one BullMQ failed by itself (stalled too often) is given up on, a completed one is popped.
 */
import type { Job, Queue } from "bullmq";
import type { Redis } from "ioredis";
import { inboundMessageSchema, type InboundMessage } from "../contracts/inbound-message.js";
import type { JobOutcomeEvent } from "../contracts/job-outcome.js";
import type { QueueKeys } from "../redis/keys.js";
import type { ConversationOrder } from "./conversation-order.js";
import type { JobContext } from "./job-context.js";
import type { ReplyJournalStore } from "./reply-journal-store.js";
import { errorSummary, type QueueLogger } from "./queue-logger.js";

const SWEEP_PAGE = 1000;

/** What the sweep needs from the runtime. */
export interface RepairSweepDeps {
  commands: Redis;
  keys: QueueKeys;
  queue: Queue;
  order: ConversationOrder;
  journals: ReplyJournalStore;
  giveUp(message: InboundMessage, ctx: JobContext, error: unknown): Promise<void>;
  onOutcome(event: JobOutcomeEvent): void;
  /** True once the worker is closing: the sweep stops early. */
  closing(): boolean;
  log: QueueLogger;
}

/** A sweep that runs at most once at a time: `run()` joins the one under way. */
export interface RepairSweep {
  run(): Promise<void>;
  /** The sweep under way, if any. */
  current(): Promise<void> | undefined;
}

/** Creates the sweep. */
export function createRepairSweep(deps: RepairSweepDeps): RepairSweep {
  const { commands, keys, journals, order } = deps;
  let sweeping: Promise<void> | undefined;

  /** Gives up on a head job BullMQ failed by itself. */
  async function giveUpOnFailedHead(job: Job, ck: string): Promise<void> {
    const jobId = job.id as string;
    const claimed = await commands.set(keys.giveUp(jobId), "1", "EX", 300, "NX");
    if (claimed !== "OK") return;
    const parsed = inboundMessageSchema.safeParse(job.data);
    const opened = parsed.success ? await journals.open(jobId) : undefined;
    if (parsed.success && opened && !opened.final) {
      const ctx: JobContext = {
        jobId,
        attempt: opened.failures + 1,
        isFinalAttempt: true,
        signal: new AbortController().signal,
        journal: opened.journal,
        markAnswered: () => journals.markFinal(jobId),
      };
      const error = new Error(job.failedReason || "job failed");
      deps.log.warn({ jobId, reason: job.failedReason }, "job failed in the queue, giving up");
      deps.onOutcome({ outcome: "given_up", jobId, attempt: ctx.attempt, message: parsed.data, error });
      await deps.giveUp(parsed.data, ctx, error);
      await journals.markFinal(jobId);
    }
    await order.advance(ck, jobId);
  }

  async function sweep(): Promise<void> {
    for (const ck of await order.pendingConversations(SWEEP_PAGE)) {
      if (deps.closing()) return;
      try {
        const headId = await commands.lindex(keys.order(ck), 0);
        const job = headId ? await deps.queue.getJob(headId) : undefined;
        const state = job ? await job.getState() : "missing";
        if (job && state === "failed") await giveUpOnFailedHead(job, ck);
        else if (job && headId && state === "completed") await order.advance(ck, headId);
        else if (!job) await order.ensureHead(ck);
      } catch (error) {
        deps.log.warn({ conversationKey: ck, err: errorSummary(error) }, "repair sweep failed for a conversation");
      }
    }
  }

  return {
    run() {
      sweeping ??= sweep()
        .catch((error: unknown) => deps.log.warn({ err: errorSummary(error) }, "repair sweep failed"))
        .finally(() => {
          sweeping = undefined;
        });
      return sweeping;
    },
    current: () => sweeping,
  };
}
