/**
 * The three ways to deploy with docker compose, checked as `docker compose config` would (no
 * Docker engine or compose plugin runs here): each file is valid against the Compose
 * Specification's JSON schema (vendored in fixtures/compose-spec, Apache-2.0), the files merge
 * as compose merges them, interpolation takes .env's values first, and the merged result of
 * each variant works: the default with the bundled llama.cpp server, the NVIDIA GPU override,
 * and Ollama on the host (no dependency on the model service it turns off, host-gateway).
 */
import { readFileSync } from "node:fs";
import { Ajv } from "ajv";
import { describe, expect, it } from "vitest";
import { isMap, parseDocument, visit } from "yaml";

const root = new URL("../..", import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), "utf8");

/** Compose's `!override` (replace instead of merge) and `!reset` (remove), kept as markers through parsing. */
const OVERRIDE = "__override__";
const RESET = "__reset__";

type Json = null | string | number | boolean | Json[] | { [key: string]: Json };
type Obj = { [key: string]: Json };
const isObj = (v: Json | undefined): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** Parses a compose file: YAML without errors or warnings other than compose's own tags, anchors resolved. */
function parseCompose(path: string): Obj {
  const doc = parseDocument(read(path), { merge: true, prettyErrors: true });
  visit(doc, {
    Node(_, node) {
      if (node.tag === "!override" || node.tag === "!reset") {
        const marker = node.tag === "!override" ? OVERRIDE : RESET;
        node.tag = undefined;
        return doc.createNode({ [marker]: isMap(node) ? node.toJSON() : node.toJSON() });
      }
      return undefined;
    },
  });
  expect(doc.errors.map(String), path).toEqual([]);
  expect(
    doc.warnings.map(String).filter((w) => !/!override|!reset/.test(w)),
    path,
  ).toEqual([]);
  return doc.toJS() as Obj;
}

/** A file as the schema sees it: compose's tags resolved to their plain values. */
function withoutMarkers(value: Json): Json {
  if (Array.isArray(value)) return value.map(withoutMarkers);
  if (!isObj(value)) return value;
  if (OVERRIDE in value) return withoutMarkers(value[OVERRIDE]!);
  if (RESET in value) return null;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withoutMarkers(v)]));
}

/** Sequences compose merges by union (the rest are replaced by the later file). */
const UNION_KEYS = new Set(["ports", "volumes", "extra_hosts", "dns", "expose", "devices", "env_file", "secrets"]);

/** Merges `over` onto `base` as compose does for `-f base -f over`. */
function merge(base: Json | undefined, over: Json, key = ""): Json | undefined {
  if (isObj(over) && OVERRIDE in over) return withoutMarkers(over[OVERRIDE]!);
  if (isObj(over) && RESET in over) return undefined;
  if (isObj(base) && isObj(over)) {
    const out: Obj = { ...base };
    for (const [k, v] of Object.entries(over)) {
      const merged = merge(base[k], v, k);
      if (merged === undefined) delete out[k];
      else out[k] = merged;
    }
    return out;
  }
  if (Array.isArray(base) && Array.isArray(over) && UNION_KEYS.has(key))
    return [...base, ...over.filter((v) => !base.some((b) => JSON.stringify(b) === JSON.stringify(v)))];
  return withoutMarkers(over);
}

/** Compose interpolation: `${VAR}`, `${VAR:-default}`, `${VAR-default}`, `$$` (a literal dollar). */
function interpolate(value: Json, env: Record<string, string>): Json {
  if (typeof value === "string")
    return value
      .replace(
        /\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?-)([^}]*))?\}/g,
        (_, name: string, op?: string, fallback?: string) => {
          const set = env[name];
          if (op === ":-") return set ? set : (fallback ?? "");
          if (op === "-") return set ?? fallback ?? "";
          return set ?? "";
        },
      )
      .replace(/\$\$/g, "$");
  if (Array.isArray(value)) return value.map((v) => interpolate(v, env));
  if (isObj(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolate(v, env)]));
  return value;
}

interface Service {
  image?: string;
  profiles?: string[];
  environment?: Record<string, string>;
  depends_on?: Record<string, { condition?: string; required?: boolean }>;
  extra_hosts?: string[];
  volumes?: string[];
  healthcheck?: { start_period?: string; start_interval?: string; interval?: string; retries?: number };
  deploy?: {
    resources?: {
      reservations?: { devices?: { driver?: string; count?: string | number; capabilities?: string[] }[] };
    };
  };
}

/** `docker compose -f … config` for the given files and .env values: the merged services compose would start. */
function config(files: string[], env: Record<string, string> = {}): Record<string, Service> {
  let merged: Json | undefined = {};
  for (const file of files) merged = merge(merged, parseCompose(file));
  const resolved = interpolate(merged as Json, env) as unknown as { services: Record<string, Service> };
  // Services in a profile start only when it is enabled; none is enabled here (the chat service is run by name).
  return Object.fromEntries(Object.entries(resolved.services).filter(([, s]) => (s.profiles ?? []).length === 0));
}

const seconds = (duration: string | undefined) => {
  const m = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(duration ?? "");
  return m ? Number(m[1] ?? 0) * 3600 + Number(m[2] ?? 0) * 60 + Number(m[3] ?? 0) : Number.NaN;
};

const FILES = ["docker-compose.yml", "docker-compose.gpu.yml", "docker-compose.ollama.yml"];
const BOT_SERVICES = ["bots", "worker"];

describe("docker compose variants", () => {
  it("every compose file is valid against the Compose Specification's schema", () => {
    const schema = JSON.parse(read("test/ops/fixtures/compose-spec/compose-spec.json"));
    // Its draft-07 meta-schema URL is spelled with https, which Ajv does not know by that name.
    delete schema.$schema;
    const validate = new Ajv({ strict: false, allErrors: true, validateFormats: false }).compile(schema);
    for (const file of FILES) {
      const valid = validate(withoutMarkers(parseCompose(file)));
      expect(validate.errors ?? [], file).toEqual([]);
      expect(valid, file).toBe(true);
    }
  });

  it("in every variant each service waits only for services that start, and the dependencies it waits on are health-checked", () => {
    for (const files of [[FILES[0]!], [FILES[0]!, FILES[1]!], [FILES[0]!, FILES[2]!]]) {
      const services = config(files);
      for (const [name, service] of Object.entries(services))
        for (const dependency of Object.keys(service.depends_on ?? {}))
          expect(Object.keys(services), `${files.join(" + ")}: ${name} waits for ${dependency}`).toContain(dependency);
    }
  });

  it("default: the bundled llama.cpp server, unless .env names another model server; a slow first download does not fail `up -d`", () => {
    const services = config(["docker-compose.yml"]);
    for (const name of BOT_SERVICES) expect(services[name]!.environment!.OPENAI_BASE_URL).toBe("http://model:8080/v1");
    expect(services.worker!.depends_on!.model).toMatchObject({ condition: "service_healthy" });
    // Failures inside the start period do not count: half an hour and more for about 2 GB.
    const health = services.model!.healthcheck!;
    expect(seconds(health.start_period)).toBeGreaterThanOrEqual(30 * 60);
    expect(seconds(health.start_interval)).toBeLessThanOrEqual(15);

    const elsewhere = config(["docker-compose.yml"], { OPENAI_BASE_URL: "http://vllm.lan:8000/v1" });
    for (const name of BOT_SERVICES)
      expect(elsewhere[name]!.environment!.OPENAI_BASE_URL).toBe("http://vllm.lan:8000/v1");
    // An empty value (as in .env.example) means the default, as it does for the bot itself.
    expect(config(["docker-compose.yml"], { OPENAI_BASE_URL: "" }).worker!.environment!.OPENAI_BASE_URL).toBe(
      "http://model:8080/v1",
    );
    expect(read(".env.example")).toMatch(/^OPENAI_BASE_URL=$/m);
  });

  it("GPU: llama.cpp's CUDA server image with an NVIDIA GPU reserved and the layers offloaded", () => {
    const model = config(["docker-compose.yml", "docker-compose.gpu.yml"]).model!;
    expect(model.image).toMatch(/^ghcr\.io\/ggml-org\/llama\.cpp:server-cuda/);
    expect(model.deploy!.resources!.reservations!.devices).toEqual([
      { driver: "nvidia", count: "all", capabilities: ["gpu"] },
    ]);
    expect(Number(model.environment!.LLAMA_ARG_N_GPU_LAYERS)).toBeGreaterThanOrEqual(99);
    // Everything else of the model service stays: the command, the cache volume, the health check.
    const base = config(["docker-compose.yml"]).model!;
    expect({ ...model, image: base.image, deploy: base.deploy, environment: base.environment }).toEqual(base);
  });

  it("Ollama on the host: no model service, the host reachable as host.docker.internal on Linux, Ollama's defaults unless .env says otherwise", () => {
    const services = config(["docker-compose.yml", "docker-compose.ollama.yml"]);
    expect(Object.keys(services)).not.toContain("model");
    for (const name of BOT_SERVICES) {
      const service = services[name]!;
      expect(service.extra_hosts, name).toContain("host.docker.internal:host-gateway");
      expect(service.environment, name).toMatchObject({
        OPENAI_BASE_URL: "http://host.docker.internal:11434/v1",
        MODEL: "qwen3:1.7b",
        MODEL_SERVER: "ollama",
        REDIS_URL: "redis://redis:6379",
      });
    }
    expect(services.worker!.depends_on).toEqual({ redis: { condition: "service_healthy" } });
    const chosen = config(["docker-compose.yml", "docker-compose.ollama.yml"], { MODEL: "qwen3:4b" });
    expect(chosen.worker!.environment!.MODEL).toBe("qwen3:4b");
  });

  it("the terminal chat's log outlives its --rm container, in a volume over the temp directory it writes to", () => {
    const chat = (parseCompose("docker-compose.yml") as unknown as { services: Record<string, Service> }).services
      .chat!;
    const logs = chat.volumes?.find((v) => v.split(":")[1] === "/tmp");
    expect(logs, "a volume at /tmp").toBeDefined();
    const volumes = (parseCompose("docker-compose.yml") as unknown as { volumes: Obj }).volumes;
    expect(Object.keys(volumes)).toContain(logs!.split(":")[0]);
    // The chat writes its log under the temp directory (os.tmpdir(): /tmp in the image).
    expect(read("src/app/chat-log-sink.ts")).toMatch(/join\(tmpdir\(\), `local-llm-chatbot-/);
  });
});
