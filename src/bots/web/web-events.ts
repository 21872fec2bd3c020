/**
 * What the web chat's page draws: the events of a conversation's Redis Stream, appended by the bots role (user
 * turns, command answers) and a worker's reply port (the loop's events, the final text). `job` groups one answer.
 */
import { assertNever, type AgentEvent } from "../../contracts/agent-events.js";

/** How much of a tool's result the stream keeps (the page shows less, expandable). */
const MAX_RESULT_CHARS = 4000;

/** One event of a web conversation's stream. */
export type WebEvent =
  | { kind: "user"; job: string; name: string; text: string; at: number }
  /** An attempt at answering `job` began: the page clears what an earlier, failed attempt drew. */
  | { kind: "begin"; job: string }
  | { kind: "reasoning"; job: string; round: number; text: string }
  | { kind: "text"; job: string; round: number; text: string }
  | { kind: "tool-call"; job: string; round: number; id: string; name: string; args: string }
  | { kind: "tool-result"; job: string; id: string; ok: boolean; output: string; ms: number }
  /** A round of the loop ended; `tool_calls` means the text before it was a preamble. */
  | { kind: "round"; job: string; round: number; reason: string }
  /** The reply as the reply engine finished it (Markdown, notes such as "stopped" included): the page's last word. */
  | { kind: "final"; job: string; text: string }
  /** An answer to a command (`/reset`, `/think off`, a refusal): plain text. */
  | { kind: "notice"; text: string }
  /** The conversation was cleared: the page forgets what it drew before. */
  | { kind: "reset" };

/** The web event for an agent event, or undefined for those the page does not draw (`finish`: `final` follows). */
export function webEventOf(job: string, event: AgentEvent): WebEvent | undefined {
  switch (event.type) {
    case "reasoning-delta":
      return event.text === "" ? undefined : { kind: "reasoning", job, round: event.round, text: event.text };
    case "text-delta":
      return event.text === "" ? undefined : { kind: "text", job, round: event.round, text: event.text };
    case "tool-call":
      return { kind: "tool-call", job, round: event.round, id: event.id, name: event.name, args: event.arguments };
    case "tool-result":
      return {
        kind: "tool-result",
        job,
        id: event.id,
        ok: event.ok,
        output: event.output.length > MAX_RESULT_CHARS ? `${event.output.slice(0, MAX_RESULT_CHARS)}…` : event.output,
        ms: Math.round(event.durationMs),
      };
    case "round-finish":
      return { kind: "round", job, round: event.round, reason: event.reason };
    case "finish":
      return undefined;
    default:
      return assertNever(event);
  }
}
