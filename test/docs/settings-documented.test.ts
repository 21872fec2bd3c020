/** docs/configuration.md and .env.example must name every setting the code reads; the README links to the full list. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { envSchema } from "../../src/config/env-schema.js";

const variables = Object.keys(envSchema.shape);
const envExample = readFileSync(new URL("../../.env.example", import.meta.url), "utf8");
const configurationDoc = readFileSync(new URL("../../docs/configuration.md", import.meta.url), "utf8");
const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");

describe("settings documentation", () => {
  it(".env.example lists every variable the schema reads, and only those", () => {
    const listed = [...envExample.matchAll(/^([A-Z][A-Z0-9_]+)=/gm)].map((m) => m[1]);
    expect([...listed].sort()).toEqual([...variables].sort());
  });

  it("docs/configuration.md documents every variable, and the README links to it", () => {
    const missing = variables.filter((name) => !configurationDoc.includes(`\`${name}\``));
    expect(missing).toEqual([]);
    expect(readme).toContain("](docs/configuration.md)");
  });

  it("the README keeps the test command and the two set-up commands, and stays short", () => {
    expect(readme).toContain("npm test");
    expect(readme).toContain("npm ci");
    expect(readme).toContain("npm run chat");
    expect(readme.split("\n").length).toBeLessThanOrEqual(260);
  });
});
