/**
 * MODEL_VISION=auto asks the server: llama.cpp's /props (the fake answers like llama-server, with
 * or without an mmproj), Ollama's /api/show capabilities; other servers count as blind. Answers
 * are cached per model and asked again later; a server that cannot answer means "no" for a while.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { startFakeOpenAI, type FakeOpenAI } from "../fakes/openai-server.js";
import { createVisionCapability, serverRoot } from "../../src/agent/vision-capability.js";

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(closers.splice(0).map((c) => c()));
});

async function fakeLlama(vision: boolean): Promise<FakeOpenAI> {
  const fake = await startFakeOpenAI({ props: { vision } });
  closers.push(() => fake.close());
  return fake;
}

/** A minimal Ollama: POST /api/show answers the capabilities of each model, counting the calls. */
async function fakeOllama(capabilities: Record<string, string[]>): Promise<{ url: string; shows: string[] }> {
  const shows: string[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      if (req.method !== "POST" || req.url !== "/api/show") return void res.writeHead(404).end("404 page not found");
      const model = (JSON.parse(body) as { model: string }).model;
      shows.push(model);
      const caps = capabilities[model];
      if (!caps)
        return void res
          .writeHead(404, { "content-type": "application/json" })
          .end(JSON.stringify({ error: `model '${model}' not found` }));
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ modelfile: "…", details: { family: "qwen3" }, capabilities: caps }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  closers.push(() => new Promise((resolve) => server.close(() => resolve())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, shows };
}

describe("vision capability", () => {
  it("reads llama-server's /props: vision with an mmproj loaded, none without", async () => {
    const seeing = await fakeLlama(true);
    const blind = await fakeLlama(false);
    expect(
      await createVisionCapability({ mode: "auto", baseURL: seeing.url, modelServer: "llama.cpp" }).supports(
        "qwen3-vl",
      ),
    ).toBe(true);
    expect(
      await createVisionCapability({ mode: "auto", baseURL: blind.url, modelServer: "llama.cpp" }).supports(
        "qwen3-1.7b",
      ),
    ).toBe(false);
    expect(serverRoot("http://h:8080/v1/")).toBe("http://h:8080");
  });

  it("asks Ollama per model and caches each answer until it expires", async () => {
    const ollama = await fakeOllama({
      "qwen2.5vl:3b": ["completion", "vision"],
      "qwen3:1.7b": ["completion", "tools", "thinking"],
    });
    let clock = 0;
    const vision = createVisionCapability({
      mode: "auto",
      baseURL: ollama.url,
      modelServer: "ollama",
      ttlMs: 1000,
      now: () => clock,
    });
    expect(await vision.supports("qwen2.5vl:3b")).toBe(true);
    expect(await vision.supports("qwen3:1.7b")).toBe(false);
    expect(await vision.supports("qwen2.5vl:3b")).toBe(true);
    expect(ollama.shows).toEqual(["qwen2.5vl:3b", "qwen3:1.7b"]);
    clock = 1500;
    expect(await vision.supports("qwen2.5vl:3b")).toBe(true);
    expect(ollama.shows).toEqual(["qwen2.5vl:3b", "qwen3:1.7b", "qwen2.5vl:3b"]);
  });

  it("an unreachable server means no vision, logged, and is asked again after the failure window", async () => {
    const failures: string[] = [];
    let clock = 0;
    const vision = createVisionCapability({
      mode: "auto",
      baseURL: "http://127.0.0.1:1/v1",
      modelServer: "llama.cpp",
      failureTtlMs: 100,
      now: () => clock,
      onProbeFailed: (_err, model) => failures.push(model),
    });
    expect(await vision.supports("m")).toBe(false);
    expect(await vision.supports("m")).toBe(false);
    expect(failures).toEqual(["m"]);
    clock = 200;
    expect(await vision.supports("m")).toBe(false);
    expect(failures).toEqual(["m", "m"]);
  });

  it("on and off are taken as said; other servers are never asked", async () => {
    const blind = await fakeLlama(false);
    expect(
      await createVisionCapability({ mode: "on", baseURL: blind.url, modelServer: "llama.cpp" }).supports("x"),
    ).toBe(true);
    expect(
      await createVisionCapability({ mode: "off", baseURL: blind.url, modelServer: "llama.cpp" }).supports("x"),
    ).toBe(false);
    const seeing = await fakeLlama(true);
    expect(await createVisionCapability({ mode: "auto", baseURL: seeing.url, modelServer: "vllm" }).supports("x")).toBe(
      false,
    );
  });
});
