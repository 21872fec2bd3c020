/** The context size: MODEL_CONTEXT_TOKENS, else llama.cpp's `/props`, else 8192. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { contextTokensFromProps, resolveContextWindow } from "../../src/tokens/context-window.js";
import { serverRootOf } from "../../src/tokens/server-tokenizer.js";
import { refusedBaseUrl } from "../fakes/openai-server.js";
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
});
