/**
 * The SearXNG that docker-compose.yml ships for web_search (Docker cannot run here): its settings
 * enable the JSON output web_search asks for (SearXNG answers 403 otherwise), and the bot's
 * containers are pointed at it.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse, parseDocument } from "yaml";
import { envSchema } from "../../src/config/env-schema.js";

const root = new URL("../..", import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), "utf8");
const compose = parseDocument(read("docker-compose.yml"), { merge: true }).toJS() as {
  services: Record<string, { image?: string; volumes?: string[]; environment?: Record<string, string> }>;
};

describe("the compose file's SearXNG", () => {
  it("mounts a settings.yml that enables JSON output and keeps the limiter off", () => {
    const searxng = compose.services.searxng!;
    expect(searxng.image).toMatch(/^searxng\/searxng/);
    const mount = searxng.volumes?.find((v) => v.includes(":/etc/searxng/settings.yml"));
    expect(mount).toBeDefined();
    const settings = parse(read(mount!.split(":")[0]!.replace(/^\.\//, ""))) as {
      use_default_settings: boolean;
      search: { formats: string[] };
      server: { limiter: boolean; secret_key: string };
    };
    expect(settings.use_default_settings).toBe(true);
    expect(settings.search.formats).toContain("json");
    expect(settings.server.limiter).toBe(false);
    // SearXNG will not start with its stock key.
    expect(settings.server.secret_key).not.toBe("ultrasecretkey");
  });

  it("points the bots, the workers and the terminal chat at it through SEARXNG_URL", () => {
    for (const name of ["bots", "worker", "chat"]) {
      const value = compose.services[name]!.environment?.SEARXNG_URL;
      expect(value, name).toBe("http://searxng:8080");
      expect(envSchema.shape.SEARXNG_URL.safeParse(value).success).toBe(true);
    }
  });
});
