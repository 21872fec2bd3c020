/**
 * `npm ci` says nothing about install scripts: every dependency that has one is approved or
 * denied in package.json's `allowScripts` (npm 11 blocks unreviewed ones and warns at each install).
 * esbuild and msgpackr-extract are denied: their binaries come as optional platform packages
 * (@esbuild/*, @msgpackr-extract/*), and the scripts only check or rebuild them.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";

const read = (path: string) => JSON.parse(readFileSync(new URL(`../../${path}`, import.meta.url), "utf8"));

describe("install scripts", () => {
  it("every dependency with an install script has a decision in allowScripts", () => {
    const lock = read("package-lock.json") as { packages: Record<string, { hasInstallScript?: boolean }> };
    const withScripts = Object.entries(lock.packages)
      .filter(([, entry]) => entry.hasInstallScript)
      .map(([path]) => path.slice(path.lastIndexOf("node_modules/") + "node_modules/".length));
    expect(withScripts.length).toBeGreaterThan(0);
    const decided = Object.keys(
      (read("package.json") as { allowScripts?: Record<string, boolean> }).allowScripts ?? {},
    );
    const undecided = withScripts.filter(
      (name) => !decided.some((entry) => entry === name || entry.startsWith(`${name}@`)),
    );
    expect(undecided).toEqual([]);
  });
});
