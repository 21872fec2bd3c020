/**
 * The architecture holds: the dependency rules in .dependency-cruiser.cjs (layers, platform libraries
 * only in adapters, no model client there, no cycles) and the size rules for functions.
 */
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { functionSizes, treeFunctionSizes } from "./function-sizes.js";

const root = fileURLToPath(new URL("../../", import.meta.url));

/** Own lines (outside nested functions) a function may have, and total lines a factory closure may span. */
const MAX_OWN_LINES = 100;
const MAX_TOTAL_LINES = 250;

describe("architecture", () => {
  it("src/ keeps the dependency rules (dependency-cruiser)", () => {
    const run = spawnSync(process.execPath, ["node_modules/dependency-cruiser/bin/dependency-cruise.mjs", "src", "--config", ".dependency-cruiser.cjs"], {
      cwd: root,
      encoding: "utf8",
    });
    expect(run.stdout + run.stderr).toContain("no dependency violations found");
    expect(run.status).toBe(0);
  }, 60_000);

  it("the checker refuses a wrong import (it is not vacuous)", () => {
    // A tiny src/ tree with two wrong imports, cruised with the same rules.
    const run = spawnSync(process.execPath, [`${root}node_modules/dependency-cruiser/bin/dependency-cruise.mjs`, "src", "--config", `${root}.dependency-cruiser.cjs`], {
      cwd: `${root}test/architecture/fixtures`,
      encoding: "utf8",
    });
    const output = run.stdout + run.stderr;
    expect(output).toMatch(/platform-libraries-only-in-adapters: src\/reply\/wrong-import\.ts/);
    expect(output).toMatch(/layer-history: src\/history\/uses-reply\.ts → src\/reply\/wrong-import\.ts/);
    expect(run.status).not.toBe(0);
  }, 60_000);

  it(`no function in src/, the fakes, the test support or the bench has over ${MAX_OWN_LINES} lines of its own or spans over ${MAX_TOTAL_LINES}`, () => {
    const sizes = ["src", "test/fakes", "test/support", "bench"].flatMap((dir) => treeFunctionSizes(`${root}${dir}`, root));
    const tooLong = sizes
      .filter((s) => !s.file.endsWith(".test.ts"))
      .filter((s) => s.own > MAX_OWN_LINES || s.total > MAX_TOTAL_LINES)
      .map((s) => `${s.file}:${s.line} ${s.name}: ${s.own} own / ${s.total} total lines`);
    expect(tooLong).toEqual([]);
  });

  it("measures own lines without the nested functions", () => {
    const text = ["function outer() {", "  const a = 1;", "  const inner = () => {", "    return a;", "  };", "  return inner;", "}"].join("\n");
    const [inner, outer] = functionSizes("x.ts", text);
    // The lines where a nested function starts and ends are shared; only the lines strictly inside are its own alone.
    expect(outer).toMatchObject({ name: "outer", total: 7, own: 6 });
    expect(inner).toMatchObject({ name: "inner", total: 3, own: 3 });
  });
});
