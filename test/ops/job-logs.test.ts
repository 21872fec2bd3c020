/**
 * The structured log as an operator greps it: one pino line per job outcome (answered,
 * failed, given up) with jobId, conversation, outcome and ms, captured from the logger's
 * destination of a real in-process bot; and no configured secret in any line, even when
 * the model server echoes the API key in its error.
 */
import { describe, expect } from "vitest";
import { privateChat } from "../fakes/telegram-server.js";
import { httpError, serverError, textAnswer, type ResponsePlan } from "../fakes/openai-server.js";
import { startOpsStack, type OpsStack } from "./support/ops-stack.js";
import { e2eTest } from "../support/fixtures.js";
import { waitFor } from "./support/ops-http.js";

const lastContent = (body: { messages?: Array<Record<string, unknown>> }) =>
  String(body.messages?.at(-1)?.content ?? "");
const outcomeLines = (s: OpsStack) => s.logs.lines().filter((l) => l.msg === "job outcome");

describe("job outcome log lines", () => {
  e2eTest(
    "writes exactly one line per outcome: answered, and failed then given up",
    async ({ fakeTelegram, fakeModel, closeAfter }) => {
      const tg = await fakeTelegram();
      // Bob's question is answered; Carol's meets a model server that keeps failing.
      const model = await fakeModel(
        (req): ResponsePlan =>
          lastContent(req.body).includes("Carol") || lastContent(req.body).includes("broken")
            ? serverError("upstream crashed")
            : textAnswer("Hello Bob!"),
      );
      const stack = closeAfter(
        await startOpsStack({
          env: { TELEGRAM_BOT_TOKEN: tg.token, TELEGRAM_API_ROOT: tg.apiRoot, OPENAI_BASE_URL: model.url },
          worker: { queue: { attempts: 2, backoffMs: 50 } },
        }),
      );
      const bob = { id: 3001, first_name: "Bob" };
      const carol = { id: 3002, first_name: "Carol" };
      const asked = tg.userSays(privateChat(bob), bob, "hi there").message as { message_id: number };
      const broken = tg.userSays(privateChat(carol), carol, "this will be broken").message as { message_id: number };

      await tg.waitFor(() => tg!.visibleText(bob.id).includes("Hello Bob!"), {
        timeoutMs: 10_000,
        what: "Bob's answer",
      });
      await tg.waitFor(() => tg!.visibleText(carol.id).includes("model is unavailable"), {
        timeoutMs: 10_000,
        what: "Carol's failure notice",
      });
      const lines = await waitFor(
        "three outcome lines",
        async () => outcomeLines(stack!).length >= 3 && outcomeLines(stack!),
      );
      // Nothing more comes for these jobs: Bob's next question gets its line, and it is the only new one.
      tg.userSays(privateChat(bob), bob, "and again");
      const after = await waitFor(
        "the next question's outcome line",
        async () => outcomeLines(stack!).length >= 4 && outcomeLines(stack!),
      );
      expect(after.slice(3).map((l) => l.outcome)).toEqual(["answered"]);
      await tg.waitFor(() => tg!.visibleText(bob.id).split("Hello Bob!").length === 3, { what: "Bob's second answer" });
      expect(outcomeLines(stack).length).toBe(4);

      const bobJob = `telegram-${bob.id}-${asked.message_id}`;
      const carolJob = `telegram-${carol.id}-${broken.message_id}`;
      const forBob = lines.filter((l) => l.jobId === bobJob);
      expect(forBob).toEqual([
        expect.objectContaining({
          level: 30,
          jobId: bobJob,
          conversation: `tg:${bob.id}`,
          platform: "telegram",
          attempt: 1,
          outcome: "answered",
          ms: expect.any(Number),
          totalMs: expect.any(Number),
        }),
      ]);
      expect(forBob[0]!.ms as number).toBeGreaterThanOrEqual(0);
      expect(forBob[0]).not.toHaveProperty("err");

      const forCarol = lines.filter((l) => l.jobId === carolJob);
      expect(forCarol.map((l) => [l.outcome, l.attempt])).toEqual([
        ["failed", 1],
        ["given_up", 2],
      ]);
      for (const line of forCarol) {
        expect(line).toMatchObject({
          level: 40,
          conversation: `tg:${carol.id}`,
          ms: expect.any(Number),
          err: { message: expect.stringContaining("upstream crashed") },
        });
      }
      // The answer processor's own lines stay at debug: at info, one job = one outcome field.
      expect(stack.logs.lines().filter((l) => "outcome" in l && l.msg !== "job outcome")).toEqual([]);
    },
  );

  e2eTest(
    "redacts every configured secret, even one the model server echoes back in its error",
    async ({ fakeTelegram, fakeModel, closeAfter }) => {
      const tg = await fakeTelegram();
      const apiKey = "sk-live-0a1b2c3d4e5f6a7b8c9d";
      const adminToken = "admin-Very-Secret-42x";
      // OpenAI-style servers quote the key they refused.
      const model = await fakeModel(() =>
        httpError(
          401,
          `Incorrect API key provided: ${apiKey}. You can find your API key at your dashboard.`,
          "invalid_request_error",
        ),
      );
      const stack = closeAfter(
        await startOpsStack({
          env: {
            TELEGRAM_BOT_TOKEN: tg.token,
            TELEGRAM_API_ROOT: tg.apiRoot,
            OPENAI_BASE_URL: model.url,
            OPENAI_API_KEY: apiKey,
            ADMIN_TOKEN: adminToken,
          },
          worker: { queue: { attempts: 2, backoffMs: 50 } },
        }),
      );
      const dave = { id: 3003, first_name: "Dave" };
      tg.userSays(privateChat(dave), dave, "hello?");
      await tg.waitFor(() => tg!.botMessages(dave.id).some((m) => m.text.includes("⚠️")), {
        timeoutMs: 10_000,
        what: "Dave's failure notice",
      });
      const [givenUp] = await waitFor("the given-up line", async () => {
        const found = outcomeLines(stack!).filter((l) => l.outcome === "given_up");
        return found.length > 0 && found;
      });

      // The key was really there to leak: the refusal reached the log, with the key scrubbed out.
      expect((givenUp!.err as { message: string }).message).toContain("Incorrect API key provided: [redacted]");
      expect(model.requests[0]!.headers.authorization).toBe(`Bearer ${apiKey}`);
      const raw = stack.logs.raw();
      for (const secret of [apiKey, adminToken, tg.token]) expect(raw).not.toContain(secret);
      // Nor does the chat show it.
      expect(tg.visibleText(dave.id)).not.toContain(apiKey);
    },
  );
});
