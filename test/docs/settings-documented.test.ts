/** The README and .env.example must name every setting the code reads, and nothing it does not. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { envSchema } from "../../src/config/env-schema.js";

const variables = Object.keys(envSchema.shape);
const envExample = readFileSync(new URL("../../.env.example", import.meta.url), "utf8");
const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");

describe("settings documentation", () => {
  it(".env.example lists every variable the schema reads, and only those", () => {
    const listed = [...envExample.matchAll(/^([A-Z][A-Z0-9_]+)=/gm)].map((m) => m[1]);
    expect([...listed].sort()).toEqual([...variables].sort());
  });

  it("the README documents every variable", () => {
    const missing = variables.filter((name) => !readme.includes(`\`${name}\``));
    expect(missing).toEqual([]);
  });
});
