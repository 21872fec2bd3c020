/**
 * The context size: MODEL_CONTEXT_TOKENS, else llama.cpp's `/props` (or, with MODEL_SERVER=ollama,
 * Ollama's `/api/show`: the Modelfile's num_ctx, else the trained length capped at 8192), else 8192.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  cachedContextWindow,
  contextTokensFromProps,
  contextWindowFromOllamaShow,
  resolveContextWindow,
} from "../../src/tokens/context-window.js";
import { serverRootOf } from "../../src/tokens/server-tokenizer.js";
import { refusedBaseUrl } from "../fakes/openai-server.js";
import { startFakeOllama } from "../fakes/ollama-server.js";
import { e2eTest } from "../support/fixtures.js";

describe("the context window", () => {
  it("reads n_ctx from a real llama-server's /props body", () => {
    const props = JSON.parse(
      readFileSync(new URL("../agent/fixtures/llama-server/random_33_get_props.json", import.meta.url), "utf8"),
    );
    expect(contextTokensFromProps(props)).toBe(4096);
    expect(contextTokensFromProps({ n_ctx: 2048 })).toBe(2048);
    expect(contextTokensFromProps({ default_generation_settings: { n_ctx: "big" } })).toBeUndefined();
  });

  e2eTest("asks the server when unset, and the setting wins when set", async ({ fakeModel }) => {
    const fake = await fakeModel({ llama: { contextTokens: 12288 } });
    const serverRoot = serverRootOf(fake.url);
    expect(serverRoot).toBe(fake.origin);
    expect(await resolveContextWindow({ serverRoot })).toEqual({ tokens: 12288, source: "server" });
    expect(await resolveContextWindow({ configured: 4096, serverRoot })).toEqual({ tokens: 4096, source: "config" });
  });

  e2eTest("is 8192 when the server has no /props or cannot be reached", async ({ fakeModel }) => {
    const fake = await fakeModel({ llama: { props: false } });
    expect(await resolveContextWindow({ serverRoot: fake.origin })).toEqual({ tokens: 8192, source: "default" });
    expect(await resolveContextWindow({ serverRoot: serverRootOf(await refusedBaseUrl()), timeoutMs: 500 })).toEqual({
      tokens: 8192,
      source: "default",
    });
  });

  it("reads Ollama's /api/show: the Modelfile's num_ctx first, else the trained length capped at 8192", () => {
    const modelInfo = { "general.architecture": "qwen3", "qwen3.context_length": 40960 };
    expect(
      contextWindowFromOllamaShow({
        parameters: 'num_ctx                        16384\nstop                           "<|im_end|>"',
        model_info: modelInfo,
      }),
    ).toEqual({ tokens: 16384, detail: "num_ctx in the Modelfile" });
    expect(contextWindowFromOllamaShow({ parameters: "top_k 20", model_info: modelInfo })).toEqual({
      tokens: 8192,
      detail: "trained context_length 40960, capped at 8192",
    });
    expect(
      contextWindowFromOllamaShow({ model_info: { "general.architecture": "gemma3", "gemma3.context_length": 4096 } }),
    ).toEqual({ tokens: 4096, detail: "trained context_length 4096" });
    expect(contextWindowFromOllamaShow({ parameters: "num_ctx big", model_info: {} })).toBeUndefined();
    expect(contextWindowFromOllamaShow("nope")).toBeUndefined();
  });

  e2eTest("with MODEL_SERVER=ollama asks /api/show for the model; the setting still wins", async ({ closeAfter }) => {
    const ollama = closeAfter(await startFakeOllama({ answer: () => ({ content: "hi" }), numCtx: 12288 }));
    const serverRoot = serverRootOf(ollama.url);
    expect(await resolveContextWindow({ serverRoot, ollamaModel: "qwen3:1.7b" })).toEqual({
      tokens: 12288,
      source: "server",
      detail: "num_ctx in the Modelfile",
    });
    expect(await resolveContextWindow({ configured: 6144, serverRoot, ollamaModel: "qwen3:1.7b" })).toEqual({
      tokens: 6144,
      source: "config",
    });
    // A model Ollama does not have (404 `model 'x' not found`): the default.
    expect(await resolveContextWindow({ serverRoot, ollamaModel: "llama9" })).toEqual({
      tokens: 8192,
      source: "default",
    });
    expect(ollama.shows).toEqual(["qwen3:1.7b", "llama9"]);
  });

  it("one answer for the whole process; a default answer is asked again after a minute", async () => {
    let clock = 0;
    const answers = [
      { tokens: 8192, source: "default" as const },
      { tokens: 12288, source: "server" as const },
    ];
    let asked = 0;
    const window = cachedContextWindow(async () => answers[Math.min(asked++, 1)]!, { now: () => clock });
    expect(await window()).toEqual(answers[0]);
    clock = 30_000;
    expect(await window()).toEqual(answers[0]);
    clock = 61_000;
    expect(await window()).toEqual(answers[1]);
    clock = 500_000;
    expect(await window()).toEqual(answers[1]);
    expect(asked).toBe(2);
  });
});
