/**
 * Every Redis key and channel of the bot (P = KEY_PREFIX, CK = conversation key escaped by `keyPart`, J = job id):
 *   P:inbound:*            BullMQ's own keys (BullMQ `prefix` = P, queue name "inbound")
 *   P:seen:J               dedupe marker, SET NX EX (about a day)
 *   P:conv:CK:order        list of job ids of one conversation, arrival order; the head is the one in BullMQ
 *   P:conv:CK:msgs         hash job id → payload JSON for the queued messages of that conversation
 *   P:pending              set of conversation keys whose order list is not empty (repair sweep)
 *   P:giveup:J             claim so only one process gives up on a job
 *   P:journal:J            reply journal: message ids, final flag, failures so far, runner record (id, proc)
 *   P:runner:J             a runner record of its own (runner-heartbeat.ts, when not kept in the journal)
 *   P:beat:PROC            the heartbeat counter of worker process PROC
 *   P:running:CK           job id answering in that conversation right now (short TTL, refreshed)
 *   P:cancel               pub/sub channel of /stop requests
 *   P:tools                the tool listing the workers publish for /tools (JSON, short TTL)
 *   P:history:CK[:tokens|:reset|:summary]  history, its token total, last reset and running summary
 *   P:pace:c:K, P:pace:g:G  GCRA cells (field `tat`) of pacing key K and bot-wide budget G (reply/redis-pacing.ts)
 *   P:ratelimit:PL:U:M     messages (and courtesy replies) of user U on platform PL in minute M (the per-user limit)
 *   P:outsider:PL:U:M      refusals told to a user not on the allow lists in minute M
 *   P:settings:CK          hash of a conversation's settings that differ from the defaults (no expiry)
 *   P:web:events:CK        capped Redis Stream of a web chat conversation's events
 *   P:web:session:S        a web chat sign-in session (JSON: name, admin, CSRF token), expiring
 *   P:schedule-book:CK, P:schedule-fired:R  a chat's schedules; the marker that run R was delivered
 *
 * Keys carry no `{…}` hash tag of their own, so with a prefix such as `{chatbot}` every key (BullMQ's too)
 * lands in one Redis Cluster slot and the multi-key scripts stay valid.
 */

/** BullMQ queue name; its keys are `${prefix}:inbound:*`. */
export const QUEUE_NAME = "inbound";

/** BullMQ job name of an inbound message (shown in dashboards). */
export const JOB_NAME = "message";

/** Escapes a free-form id for use inside a key: injective, and free of hash-tag braces. */
export function keyPart(value: string): string {
  return value.replace(/[%{}]/g, (c) => (c === "%" ? "%25" : c === "{" ? "%7B" : "%7D"));
}

/** The key names of one deployment (one KEY_PREFIX). */
export interface QueueKeys {
  seen(jobId: string): string;
  order(conversationKey: string): string;
  messages(conversationKey: string): string;
  pending(): string;
  giveUp(jobId: string): string;
  journal(jobId: string): string;
  runner(jobId: string): string;
  /** The beat counter of worker process `processId` (runner-heartbeat.ts). */
  processBeat(processId: string): string;
  running(conversationKey: string): string;
  cancelChannel(): string;
  toolListing(): string;
}

/** Builds the key names for a KEY_PREFIX. */
export function queueKeys(prefix: string): QueueKeys {
  return {
    seen: (jobId) => `${prefix}:seen:${keyPart(jobId)}`,
    order: (ck) => `${prefix}:conv:${keyPart(ck)}:order`,
    messages: (ck) => `${prefix}:conv:${keyPart(ck)}:msgs`,
    pending: () => `${prefix}:pending`,
    giveUp: (jobId) => `${prefix}:giveup:${keyPart(jobId)}`,
    journal: (jobId) => `${prefix}:journal:${keyPart(jobId)}`,
    runner: (jobId) => `${prefix}:runner:${keyPart(jobId)}`,
    processBeat: (processId) => `${prefix}:beat:${keyPart(processId)}`,
    running: (ck) => `${prefix}:running:${keyPart(ck)}`,
    cancelChannel: () => `${prefix}:cancel`,
    toolListing: () => `${prefix}:tools`,
  };
}

/** The keys of one conversation's history (list, token total, reset marker, running summary). */
export function historyKeys(
  prefix: string,
  conversationKey: string,
): { list: string; tokens: string; reset: string; summary: string } {
  const list = `${prefix}:history:${keyPart(conversationKey)}`;
  return { list, tokens: `${list}:tokens`, reset: `${list}:reset`, summary: `${list}:summary` };
}

/** The GCRA cells of the shared pacing (reply/redis-pacing.ts): a chat's and a platform's bot-wide budget. */
export function paceKeys(prefix: string): { chat(chatKey: string): string; budget(budget: string): string } {
  return {
    chat: (chatKey) => `${prefix}:pace:c:${keyPart(chatKey)}`,
    budget: (budget) => `${prefix}:pace:g:${keyPart(budget)}`,
  };
}

/** The counter of one user's messages (and courtesy replies) in one minute (ingress/limited-gateway.ts). */
export function userRateKey(prefix: string, platform: string, userId: string, minute: number): string {
  return `${prefix}:ratelimit:${keyPart(platform)}:${keyPart(userId)}:${minute}`;
}

/** The per-minute counter of refusals told to one user who is not on the allow lists. */
export function outsiderRefusalKey(prefix: string, platform: string, userId: string, minute: number): string {
  return `${prefix}:outsider:${keyPart(platform)}:${keyPart(userId)}:${minute}`;
}

/** The hash of a conversation's own settings (model, thinking, reasoning, persona, tools switched off). */
export function conversationSettingsKey(prefix: string, conversationKey: string): string {
  return `${prefix}:settings:${keyPart(conversationKey)}`;
}

/** The keys of the web chat (src/bots/web): a conversation's event stream and a sign-in session. */
export function webKeys(prefix: string): { events(conversationKey: string): string; session(id: string): string } {
  return {
    events: (ck) => `${prefix}:web:events:${keyPart(ck)}`,
    session: (id) => `${prefix}:web:session:${keyPart(id)}`,
  };
}

/** BullMQ queue of schedule runs (delayed jobs and job schedulers); its keys are `${prefix}:schedules:*`. */
export const SCHEDULE_QUEUE_NAME = "schedules";

/** The hash of a chat's schedules (schedule id → record JSON). */
export function schedulesKey(prefix: string, conversationKey: string): string {
  return `${prefix}:schedule-book:${keyPart(conversationKey)}`;
}

/** The marker that one run of a schedule was delivered (a stalled job taken over does not post twice). */
export function scheduleFiredKey(prefix: string, runId: string): string {
  return `${prefix}:schedule-fired:${keyPart(runId)}`;
}
