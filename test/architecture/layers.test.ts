/**
 * The architecture holds: the dependency rules in .dependency-cruiser.cjs (layers, platform libraries
 * only in adapters, no model client there, no cycles). Files follow seams, not a line count: there is no size gate.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("../../", import.meta.url));

describe("architecture", () => {
  it("src/ keeps the dependency rules (dependency-cruiser)", () => {
    const run = spawnSync(
      process.execPath,
      ["node_modules/dependency-cruiser/bin/dependency-cruise.mjs", "src", "--config", ".dependency-cruiser.cjs"],
      {
        cwd: root,
        encoding: "utf8",
      },
    );
    expect(run.stdout + run.stderr).toContain("no dependency violations found");
    expect(run.status).toBe(0);
  }, 60_000);

  it("the checker refuses a wrong import (it is not vacuous)", () => {
    // A tiny src/ tree with two wrong imports and a cycle of type imports, cruised with the same rules.
    const run = spawnSync(
      process.execPath,
      [
        `${root}node_modules/dependency-cruiser/bin/dependency-cruise.mjs`,
        "src",
        "--config",
        `${root}.dependency-cruiser.cjs`,
      ],
      {
        cwd: `${root}test/architecture/fixtures`,
        encoding: "utf8",
      },
    );
    const output = run.stdout + run.stderr;
    expect(output).toMatch(/platform-libraries-only-in-adapters: src\/reply\/wrong-import\.ts/);
    expect(output).toMatch(/layer-history: src\/history\/uses-reply\.ts → src\/reply\/wrong-import\.ts/);
    expect(output).toMatch(/no-circular: src\/tools\/(fetcher|resolver)\.ts → \s*src\/tools\/(resolver|fetcher)\.ts/);
    expect(run.status).not.toBe(0);
  }, 60_000);
});
