/**
 * /metrics after real conversations: messages through the fake Telegram, answered by the
 * fake model (one with a weather tool round) with the real bots and worker roles, scraped
 * from the ops server the way Prometheus does it. Each figure is checked against what the
 * fakes saw.
 */
import { describe, expect } from "vitest";
import { privateChat, type FakeChat } from "../fakes/telegram-server.js";
import { paced, textAnswer, toolCallAnswer, type ResponsePlan } from "../fakes/openai-server.js";
import { startOpsStack } from "../ops/support/ops-stack.js";
import { e2eTest } from "../support/fixtures.js";
import { scrape, waitFor } from "../ops/support/ops-http.js";
import { valueOf } from "../ops/support/prometheus-text.js";

const lastContent = (body: { messages?: Array<Record<string, unknown>> }) =>
  String(body.messages?.at(-1)?.content ?? "");

describe("/metrics of a bot that answered", () => {
  e2eTest(
    "shows messages, jobs, queue depth, latencies, model speed, platform requests, tools and conversations",
    async ({ fakeTelegram, fakeModel, fakeWeb, closeAfter }) => {
      const tg = await fakeTelegram();
      const web = await fakeWeb();
      // Routed by what was asked, since conversations run at once.
      const model = await fakeModel((req): ResponsePlan => {
        if (req.body.messages?.at(-1)?.role === "tool")
          return paced(textAnswer("In London it is mild and cloudy right now."), 100);
        const asked = lastContent(req.body);
        if (asked.includes("weather in London"))
          return paced(toolCallAnswer([{ name: "get_weather", arguments: { city: "London" } }]), 100);
        // A slow prompt evaluation: 1.5 s to the first token.
        if (asked.includes("first question"))
          return { ...paced(textAnswer("Here is the first answer."), 100), headerDelayMs: 1500 };
        return paced(textAnswer("Here is the second answer."), 100);
      });
      const stack = closeAfter(
        await startOpsStack({
          env: {
            TELEGRAM_BOT_TOKEN: tg.token,
            TELEGRAM_API_ROOT: tg.apiRoot,
            OPENAI_BASE_URL: model.url,
            WEATHER_API_BASE: web.url,
          },
        }),
      );
      const ops = stack.opsUrl;
      // A slow weather API: the tool's second is not the model's time to first token in the next round.
      web.setDelay("/London", 1000);

      // Alice asks in a group (placeholder + edits), and Telegram refuses the first edit with a 429.
      const group: FakeChat = { id: -1001234, type: "group", title: "Ops" };
      const alice = { id: 1001, first_name: "Alice" };
      tg.failNext("editMessageText", 1, { retryAfter: 1 });
      tg.userSays(group, alice, "/ask what is the weather in London?");
      // Bob asks twice in a row in private: the second question waits behind the first.
      const bob = { id: 2002, first_name: "Bob" };
      tg.userSays(privateChat(bob), bob, "first question");
      tg.userSays(privateChat(bob), bob, "second question");

      const busy = await waitFor("the queue depth to show Bob's backlog", async () => {
        const m = await scrape(ops);
        const depth = (state: string) => valueOf(m, "chatbot_queue_depth", { state });
        return (
          depth("unanswered") === 3 && depth("active") === 2 && valueOf(m, "chatbot_active_conversations") === 2 && m
        );
      });
      expect(valueOf(busy, "chatbot_queue_depth", { state: "waiting" })).toBe(0);

      await tg.waitFor(() => tg!.visibleText(group.id).includes("mild and cloudy"), {
        timeoutMs: 15_000,
        what: "Alice's answer",
      });
      await tg.waitFor(() => tg!.visibleText(bob.id).includes("second answer"), {
        timeoutMs: 15_000,
        what: "Bob's second answer",
      });
      const m = await waitFor("three jobs done and the queue empty", async () => {
        const s = await scrape(ops);
        const depth = ["waiting", "active", "unanswered"].map((state) => valueOf(s, "chatbot_queue_depth", { state }));
        return valueOf(s, "chatbot_jobs_total", { outcome: "done" }) === 3 && depth.every((d) => d === 0) && s;
      });

      expect(valueOf(m, "chatbot_messages_in_total", { platform: "telegram", outcome: "queued" })).toBe(3);
      expect(valueOf(m, "chatbot_jobs_total", { outcome: "retried" })).toBe(0);
      expect(valueOf(m, "chatbot_jobs_total", { outcome: "failed" })).toBe(0);
      for (const state of ["delayed", "failed"]) expect(valueOf(m, "chatbot_queue_depth", { state }), state).toBe(0);
      expect(valueOf(m, "chatbot_active_conversations")).toBe(0);
      expect(valueOf(m, "chatbot_first_visible_seconds_count", { platform: "telegram" })).toBe(3);
      expect(valueOf(m, "chatbot_tool_calls_total", { tool: "get_weather", outcome: "ok" })).toBe(1);

      // Model timing: one first token per text round (Bob ×2, Alice's answer); only Bob's first came after a slow (1.5 s) prompt.
      expect(valueOf(m, "chatbot_model_first_token_seconds_count")).toBe(3);
      expect(valueOf(m, "chatbot_model_first_token_seconds_bucket", { le: "1" })).toBe(2);
      expect(valueOf(m, "chatbot_model_tokens_per_second_count")).toBe(3);
      const tokensPerSecond = valueOf(m, "chatbot_model_tokens_per_second_sum") / 3;
      expect(tokensPerSecond).toBeGreaterThan(30); // the fake streams at 100 tokens/s
      expect(tokensPerSecond).toBeLessThan(200);

      // Platform requests: the metric agrees with what reached the fake Bot API.
      const answered = (method: string) => tg!.calls(method).filter((c) => c.ok).length;
      const telegram = (kind: string, outcome: string) =>
        valueOf(m, "chatbot_platform_requests_total", { platform: "telegram", kind, outcome });
      expect(telegram("edit", "ok")).toBeGreaterThanOrEqual(1);
      expect(telegram("edit", "ok")).toBe(answered("editMessageText"));
      expect(telegram("edit", "rate_limited")).toBe(1);
      expect(valueOf(m, "chatbot_platform_requests_total", { platform: "telegram", outcome: "rate_limited" })).toBe(1);
      expect(telegram("send", "ok")).toBe(answered("sendMessage"));
      expect(telegram("draft", "ok")).toBe(answered("sendMessageDraft"));
      expect(answered("sendMessageDraft")).toBeGreaterThan(0);
      expect(telegram("typing", "ok")).toBe(answered("sendChatAction"));
      expect(tg.floodViolations().filter((v) => v.enforced && v.rule !== "flood-wait")).toEqual([]);

      expect(m.types.get("chatbot_model_first_token_seconds")).toBe("histogram");
      expect(m.types.get("chatbot_queue_depth")).toBe("gauge");
      expect(m.types.get("chatbot_platform_requests_total")).toBe("counter");
    },
  );

  e2eTest(
    "counts Discord sends, edits and 429s as the fake Discord saw them",
    async ({ fakeModel, fakeDiscord, closeAfter }) => {
      const discord = await fakeDiscord();
      const words = Array.from({ length: 40 }, (_, i) => `word${i}`).join(" ");
      const model = await fakeModel(() => paced(textAnswer(`Here goes: ${words}.`), 20));
      const stack = closeAfter(
        await startOpsStack({
          env: { DISCORD_BOT_TOKEN: discord.token, DISCORD_API_BASE: discord.apiBase, OPENAI_BASE_URL: model.url },
        }),
      );
      const channel = discord.ids.general;
      // Discord refuses the first edit of the answer with a 429 (retry_after 300 ms).
      discord.failNext({ route: "PATCH /channels/:id/messages/:id", status: 429, retryAfterMs: 300 });
      discord.userSays({ channelId: channel, content: "say many words", mentionsBot: true });
      await discord.waitFor(() => discord!.botMessages(channel).some((msg) => msg.content.includes("word39.")), {
        timeoutMs: 12_000,
        label: "the answer",
      });

      const m = await waitFor("the job done", async () => {
        const s = await scrape(stack!.opsUrl);
        return valueOf(s, "chatbot_jobs_total", { outcome: "done" }) === 1 && s;
      });
      const reached = (route: string, status: (code: number) => boolean) =>
        discord!.requests.filter((r) => r.route === route && status(r.status)).length;
      const ok = (code: number) => code >= 200 && code < 300;
      const count = (kind: string, outcome: string) =>
        valueOf(m, "chatbot_platform_requests_total", { platform: "discord", kind, outcome });
      expect(count("send", "ok")).toBe(reached("POST /channels/:id/messages", ok));
      expect(count("edit", "ok")).toBe(reached("PATCH /channels/:id/messages/:id", ok));
      expect(count("edit", "ok")).toBeGreaterThanOrEqual(2);
      expect(count("edit", "rate_limited")).toBe(1);
      expect(reached("PATCH /channels/:id/messages/:id", (code) => code === 429)).toBe(1);
      expect(count("typing", "ok")).toBe(reached("POST /channels/:id/typing", ok));
      expect(discord.violations).toEqual([]);
      expect(valueOf(m, "chatbot_first_visible_seconds_count", { platform: "discord" })).toBe(1);
      expect(valueOf(m, "chatbot_messages_in_total", { platform: "discord", outcome: "queued" })).toBe(1);
    },
  );
});
