/**
 * Errors as users see them: short and useful, never the internals. The model
 * server fails in ways that put internals in the error itself (a Python traceback with
 * file paths and an internal URL in a 500, an echoed key in a 401, a context overflow),
 * or does not answer at all. The chat gets one line that says what to do; the details
 * stay in the log (checked in hostile-secrets-in-logs and log-redaction tests).
 */
import { describe, expect } from "vitest";
import { privateChat } from "../fakes/telegram-server.js";
import { contextExceeded, httpError, refusedBaseUrl, type ResponsePlan } from "../fakes/openai-server.js";
import { startHostileRig } from "../security/hostile-kit.js";
import { e2eTest } from "../support/fixtures.js";

const TRACEBACK = [
  "Traceback (most recent call last):",
  '  File "/srv/vllm/engine/async_llm_engine.py", line 412, in generate',
  "    raise EngineDeadError(f'upstream http://10.0.3.7:8001/v1 died')",
  "vllm.engine.EngineDeadError: upstream http://10.0.3.7:8001/v1 died",
].join("\n");

/** What a user must never read in an error line. */
const INTERNALS =
  /Traceback|File "|\.py\b|https?:\/\/|10\.0\.3\.7|127\.0\.0\.1|Error\b|ECONN|\bat \S+:\d+|sk-|\b(401|500|400)\b/;

describe("model failures, as the user sees them", () => {
  e2eTest(
    "a 500 with a traceback, a 401 echoing the key and a context overflow each give one short line",
    async ({ closeAfter }) => {
      const plans: Record<string, ResponsePlan> = {
        traceback: httpError(500, TRACEBACK, "server_error"),
        key: httpError(401, "Incorrect API key provided: sk-live-0000111122223333", "invalid_request_error"),
        overflow: contextExceeded(9000, 4096),
      };
      const rig = closeAfter(
        await startHostileRig({ platform: "telegram", worker: { queue: { attempts: 2, backoffMs: 50 } } }),
      );
      const { tg, model } = { tg: rig.tg!, model: rig.model };
      model.setHandler((request) => {
        const asked = String(request.body.messages?.at(-1)?.content ?? "");
        return plans[asked] ?? httpError(500, "unexpected question", "server_error");
      });
      const people = Object.keys(plans).map((kind, i) => ({ kind, user: { id: 2001 + i, first_name: kind } }));
      for (const { kind, user } of people) tg.userSays(privateChat(user), user, kind);

      const expected: Record<string, string> = {
        traceback: "⚠️ The model is unavailable right now — please try again in a moment.",
        key: "⚠️ Something went wrong while answering — please try again.",
        overflow: "⚠️ This conversation is too long for the model — send /reset to start over.",
      };
      for (const { kind, user } of people) {
        await tg.waitFor(() => tg.visibleText(user.id).includes("⚠️"), {
          timeoutMs: 12_000,
          what: `the ${kind} failure line`,
        });
        expect(tg.visibleText(user.id)).toBe(expected[kind]);
        expect(tg.visibleText(user.id)).not.toMatch(INTERNALS);
      }
      // Retryable faults were retried; the others were not sent twice.
      const asked = model.requests.map((r) => String(r.body.messages?.at(-1)?.content));
      expect(asked.filter((q) => q === "traceback")).toHaveLength(2);
      expect(asked.filter((q) => q === "key")).toHaveLength(1);
      expect(asked.filter((q) => q === "overflow")).toHaveLength(1);
    },
  );

  e2eTest("a model server that refuses connections: retried, then the same short line", async ({ closeAfter }) => {
    const rig = closeAfter(
      await startHostileRig({
        platform: "telegram",
        env: { OPENAI_BASE_URL: await refusedBaseUrl() },
        worker: { queue: { attempts: 2, backoffMs: 50 } },
      }),
    );
    const tg = rig.tg!;
    const alice = { id: 1001, first_name: "Alice" };
    tg.userSays(privateChat(alice), alice, "hello?");
    await tg.waitFor(() => tg.visibleText(alice.id).includes("⚠️"), { timeoutMs: 12_000, what: "the failure line" });
    expect(tg.visibleText(alice.id)).toBe("⚠️ The model is unavailable right now — please try again in a moment.");
  });
});
