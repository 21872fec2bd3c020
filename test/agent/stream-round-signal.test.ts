/**
 * A round's request signal ends with the round. Node keeps a signal made by AbortSignal.any alive
 * while its sources live (a job's signal lives for the whole job) unless it aborts, and the SDK's
 * listener on it holds the request: a round that left it pending leaked a few kilobytes per round.
 */
import { describe, expect } from "vitest";
import { createModelClient } from "../../src/agent/model-client.js";
import { streamRound } from "../../src/agent/stream-round.js";
import { textAnswer } from "../fakes/openai-server.js";
import { e2eTest } from "../support/fixtures.js";

describe("streamRound: the request's signal", () => {
  e2eTest(
    "ends with the round, answered or stopped early, while the job's own signal stays live",
    async ({ model }) => {
      model.script([
        textAnswer("Hello there, friend."),
        textAnswer("A longer answer that the consumer stops reading."),
      ]);
      const seen: AbortSignal[] = [];
      const client = createModelClient({
        baseURL: model.url,
        apiKey: "sk-test",
        timeoutMs: 5000,
        fetch: (input, init) => {
          if (init?.signal) seen.push(init.signal);
          return fetch(input, init);
        },
      });
      const job = new AbortController();
      const body = { model: "m", messages: [{ role: "user" as const, content: "hi" }], stream: true as const };
      let text = "";
      for await (const delta of streamRound(client, body, { signal: job.signal, idleTimeoutMs: 5000 })) {
        if (delta.type === "text") text += delta.text;
      }
      expect(text).toBe("Hello there, friend.");
      expect(seen).toHaveLength(1);
      expect(seen[0]!.aborted).toBe(true);

      for await (const delta of streamRound(client, body, { signal: job.signal, idleTimeoutMs: 5000 })) {
        if (delta.type === "text") break;
      }
      expect(seen).toHaveLength(2);
      expect(seen[1]!.aborted).toBe(true);
      expect(job.signal.aborted).toBe(false);
    },
  );
});
