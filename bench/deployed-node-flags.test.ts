import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { deployedNodeFlags, nodeFlagsOf } from "./deployed-node-flags.js";

const REPO_ROOT = fileURLToPath(new URL("..", import.meta.url));

describe("deployedNodeFlags", () => {
  it("reads the flags the compose file starts each role with", () => {
    expect(deployedNodeFlags(REPO_ROOT, "bots")).toEqual(["--max-semi-space-size=1", "--v8-pool-size=1"]);
    expect(deployedNodeFlags(REPO_ROOT, "worker")).toEqual(["--v8-pool-size=1"]);
  });

  it("takes the command of the named service only, and refuses what it cannot read", () => {
    const compose = [
      "x-bot: &bot",
      "  image: x",
      "services:",
      "  bots:",
      "    <<: *bot",
      '    command: ["node", "--a", "--b=2", "dist/main.js", "bots"]',
      "  worker:",
      "    image: x",
      "  other:",
      '    command: ["node", "--c", "dist/main.js", "worker"]',
      "",
    ].join("\n");
    expect(nodeFlagsOf(compose, "bots")).toEqual(["--a", "--b=2"]);
    expect(() => nodeFlagsOf(compose, "worker")).toThrow(/no list-form command/);
    expect(() => nodeFlagsOf(compose, "missing")).toThrow(/no service/);
    expect(() => nodeFlagsOf('services:\n  s:\n    command: ["sh", "x"]\n', "s")).toThrow(/not a node invocation/);
  });
});
