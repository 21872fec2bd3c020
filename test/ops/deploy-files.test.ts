/**
 * docker-compose.yml and the Dockerfile, checked against the code they deploy (Docker
 * itself cannot run here): the compose file parses, has the services a deployment needs, keeps
 * Redis durable and the worker scalable, names only settings the bot reads and roles
 * main.ts knows, points the bot at the right service addresses, and every service has a
 * health check; the image is multi-stage and runs what package.json builds.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseDocument } from "yaml";
import { envSchema } from "../../src/config/env-schema.js";

const root = new URL("../..", import.meta.url);
const read = (path: string) => readFileSync(new URL(path, root), "utf8");

interface Service {
  build?: unknown;
  image?: string;
  command?: string[] | string;
  environment?: Record<string, string> | string[];
  env_file?: unknown;
  ports?: unknown[];
  container_name?: string;
  healthcheck?: { test?: string[] | string; disable?: boolean };
  depends_on?: Record<string, { condition?: string }> | string[];
  volumes?: string[];
  deploy?: { replicas?: number };
  profiles?: string[];
  stdin_open?: boolean;
  tty?: boolean;
  restart?: string;
}

const composeText = read("docker-compose.yml");
const composeDoc = parseDocument(composeText, { merge: true, prettyErrors: true });
const compose = composeDoc.toJS() as { services: Record<string, Service>; volumes?: Record<string, unknown> };
const services = compose.services ?? {};
const dockerfile = read("Dockerfile");
const packageJson = JSON.parse(read("package.json")) as {
  main: string;
  scripts: Record<string, string>;
  engines: { node: string };
};
const schemaVariables = new Set(Object.keys(envSchema.shape));
/** Variables the image may set that Node or its libraries read, not the bot (express renders errors quietly in production). */
const PLATFORM_VARIABLES = new Set(["NODE_ENV"]);

/** The services that run our image. */
const ourServices = Object.entries(services).filter(([, s]) => s.build !== undefined);

const asList = (command: Service["command"]): string[] =>
  Array.isArray(command) ? command : (command ?? "").split(/\s+/).filter(Boolean);
const environmentOf = (s: Service): Record<string, string> =>
  Array.isArray(s.environment)
    ? Object.fromEntries(s.environment.map((e) => [e.split("=")[0]!, e.split("=").slice(1).join("=")]))
    : (s.environment ?? {});

/** The roles main.ts accepts, read from its source (importing it would start the bot). */
function mainRoles(): string[] {
  const m = /const ROLES = \[([^\]]*)\] as const/.exec(read("src/main.ts"));
  if (!m) throw new Error("src/main.ts no longer declares `const ROLES = [...] as const`: update this check");
  return [...m[1]!.matchAll(/"([^"]+)"/g)].map((r) => r[1]!);
}

/** Dockerfile instructions with line continuations joined. */
function instructions(): { op: string; args: string }[] {
  return dockerfile
    .replace(/\\\n/g, " ")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#"))
    .map((l) => {
      const [op = "", ...rest] = l.split(/\s+/);
      return { op: op.toUpperCase(), args: rest.join(" ") };
    });
}

/** Stages: FROM … AS name, with the instructions under each. */
function stages(): { name: string; from: string; body: { op: string; args: string }[] }[] {
  const out: { name: string; from: string; body: { op: string; args: string }[] }[] = [];
  for (const ins of instructions()) {
    if (ins.op === "FROM") {
      const m = /^(\S+)(?:\s+AS\s+(\S+))?/i.exec(ins.args);
      out.push({ from: m?.[1] ?? "", name: m?.[2] ?? String(out.length), body: [] });
    } else {
      out.at(-1)?.body.push(ins);
    }
  }
  return out;
}

describe("docker-compose.yml", () => {
  it("parses as YAML without errors or warnings", () => {
    expect(composeDoc.errors.map(String)).toEqual([]);
    expect(composeDoc.warnings.map(String)).toEqual([]);
    expect(typeof compose.services).toBe("object");
  });

  it("runs Redis, the model server, the adapters and the worker as separate services", () => {
    expect(Object.keys(services)).toEqual(expect.arrayContaining(["redis", "model", "bots", "worker"]));
    expect(ourServices.map(([name]) => name).sort()).toEqual(["bots", "chat", "worker"]);
  });

  it("keeps Redis durable and never evicting queue keys, on a named volume", () => {
    const command = asList(services.redis!.command);
    const flag = (name: string) => command[command.indexOf(name) + 1];
    expect(command[0]).toBe("redis-server");
    expect(flag("--appendonly")).toBe("yes");
    expect(flag("--maxmemory-policy")).toBe("noeviction");
    const dataVolume = services.redis!.volumes?.find((v) => v.endsWith(":/data"));
    expect(dataVolume, "a volume mounted at /data").toBeDefined();
    expect(Object.keys(compose.volumes ?? {})).toContain(dataVolume!.split(":")[0]);
  });

  it("serves Qwen3-1.7B with llama.cpp's --jinja chat template, its downloads kept on a volume", () => {
    const command = asList(services.model!.command);
    expect(command).toContain("--jinja");
    // An explicit --parallel splits -c between the slots unless the KV cache is unified.
    if (command.includes("--parallel")) expect(command).toContain("--kv-unified");
    expect(command.join(" ")).toMatch(/Qwen3-1\.7B-GGUF/);
    expect(services.model!.volumes?.some((v) => /^[\w-]+:\//.test(v))).toBe(true);
  });

  it("lets the worker scale: no container name, no fixed host port, no fixed replica count", () => {
    const worker = services.worker!;
    expect(worker.container_name).toBeUndefined();
    expect(worker.deploy?.replicas).toBeUndefined();
    // "9464" (container port only) scales; "9464:9464" or "127.0.0.1:9464:9464" does not.
    for (const port of worker.ports ?? []) {
      const published =
        typeof port === "object" && port !== null
          ? (port as { published?: unknown }).published
          : String(port).split(":").length > 1;
      expect(published, `worker port ${JSON.stringify(port)}`).toBeFalsy();
    }
  });

  it("names only settings that src/config/env-schema.ts reads", () => {
    const named = new Set<string>();
    for (const [, service] of ourServices) for (const key of Object.keys(environmentOf(service))) named.add(key);
    // Interpolations (${VAR}, $VAR) anywhere in the file or its overrides; `$$` is a literal dollar.
    const overrides = ["docker-compose.gpu.yml", "docker-compose.ollama.yml"].map(read).join("\n");
    for (const m of `${composeText}\n${overrides}`.replace(/\$\$/g, "").matchAll(/\$\{?([A-Za-z_][A-Za-z0-9_]*)/g))
      named.add(m[1]!);
    const unknown = [...named].filter((v) => !schemaVariables.has(v));
    expect(unknown).toEqual([]);
    expect(named.size).toBeGreaterThan(0);
  });

  it("reads tokens from .env (optional), whose template .env.example exists", () => {
    for (const [name, service] of ourServices) {
      const files = (Array.isArray(service.env_file) ? service.env_file : [service.env_file]).map((f) =>
        typeof f === "string" ? f : (f as { path: string }).path,
      );
      expect(files, name).toContain(".env");
    }
    expect(existsSync(new URL(".env.example", root))).toBe(true);
  });

  it("points the bot at the Redis and model services by their names and ports", () => {
    const modelCommand = asList(services.model!.command);
    const modelPort = modelCommand[modelCommand.indexOf("--port") + 1] ?? "8080";
    for (const [name, service] of ourServices) {
      const env = environmentOf(service);
      const redis = new URL(env.REDIS_URL ?? "");
      expect(redis.hostname, name).toBe("redis");
      expect(redis.port || "6379", name).toBe("6379");
      expect(asList(services.redis!.command)).not.toContain("--port");
      // `${OPENAI_BASE_URL:-…}`: .env may name another server; unset (or empty) means the model service.
      const model = new URL((env.OPENAI_BASE_URL ?? "").replace(/^\$\{OPENAI_BASE_URL:-(.*)\}$/, "$1"));
      expect(model.hostname, name).toBe("model");
      expect(model.port, name).toBe(modelPort);
      expect(model.pathname, name).toBe("/v1");
    }
  });

  it("publishes the ops port the container really listens on (HTTP_PORT), on loopback only", () => {
    for (const [name, service] of ourServices) {
      const listens = environmentOf(service).HTTP_PORT ?? String(envSchema.shape.HTTP_PORT.parse(undefined));
      for (const port of service.ports ?? []) {
        const parts = String(port).split(":");
        expect(parts.at(-1), `${name} publishes ${String(port)}`).toBe(listens);
        if (parts.length === 3) expect(parts[0], `${name} publishes ${String(port)}`).toBe("127.0.0.1");
      }
    }
  });

  it("runs roles that src/main.ts knows, through the file package.json builds", () => {
    const roles = mainRoles();
    expect(roles).toEqual(expect.arrayContaining(["all", "bots", "worker", "chat"]));
    const commandOf = (service: Service) => {
      const [node, ...rest] = asList(service.command);
      const at = rest.indexOf(packageJson.main);
      return { node, flags: rest.slice(0, Math.max(0, at)), script: rest[at], role: rest[at + 1] };
    };
    for (const [name, service] of ourServices) {
      const { node, flags, script, role } = commandOf(service);
      expect(node, name).toBe("node");
      expect(script, name).toBe(packageJson.main);
      expect(roles, name).toContain(role);
      // Node flags before the script are real ones: this Node starts with them.
      if (flags.length > 0) execFileSync(process.execPath, [...flags, "-e", "0"]);
      // The interactive terminal chat runs only when asked for (`docker compose run --rm chat`).
      if (role === "chat") expect(service.profiles, name).toEqual(["chat"]);
    }
    expect(commandOf(services.bots!).role).toBe("bots");
    expect(commandOf(services.worker!).role).toBe("worker");
  });

  it("gives every service a health check, and waits for healthy dependencies", () => {
    const imageHealthcheck = instructions().some((i) => i.op === "HEALTHCHECK" && i.args.includes("/healthz"));
    const healthChecked = (name: string) => {
      const s = services[name]!;
      const test = asList(s.healthcheck?.test as string[] | string | undefined);
      return (test.length > 0 && !s.healthcheck?.disable) || (s.build !== undefined && imageHealthcheck);
    };
    // The interactive chat serves no /healthz and nothing depends on it.
    for (const name of Object.keys(services).filter((n) => n !== "chat"))
      expect(healthChecked(name), `${name} has a health check`).toBe(true);
    for (const [name, service] of Object.entries(services)) {
      for (const [dependency, spec] of Object.entries(
        Array.isArray(service.depends_on) ? {} : (service.depends_on ?? {}),
      )) {
        expect(Object.keys(services), `${name} depends on ${dependency}`).toContain(dependency);
        if (spec.condition === "service_healthy")
          expect(healthChecked(dependency), `${dependency} has a health check`).toBe(true);
      }
    }
    expect(services.worker!.depends_on).toMatchObject({
      redis: { condition: "service_healthy" },
      model: { condition: "service_healthy" },
    });
  });
});

describe("docker compose run --rm chat", () => {
  const chat = services.chat!;

  it("is an interactive terminal chat that `docker compose up -d` leaves alone", () => {
    expect(asList(chat.command)).toEqual(["node", packageJson.main, "chat", "--wait-for-model"]);
    expect(chat.stdin_open).toBe(true);
    expect(chat.tty).toBe(true);
    expect(chat.profiles).toEqual(["chat"]);
    expect(chat.restart ?? "no").toBe("no");
    expect(chat.ports ?? []).toEqual([]);
    expect(chat.healthcheck?.disable).toBe(true);
    for (const [name, service] of Object.entries(services))
      expect(Object.keys(service.depends_on ?? {}), `${name} depends on chat`).not.toContain("chat");
  });

  it("needs no token and no .env: the compose file's Redis and model, waiting for the model's first download itself", () => {
    const env = environmentOf(chat);
    expect(Object.keys(env).filter((k) => /TOKEN|KEY/.test(k))).toEqual([]);
    const envFiles = (Array.isArray(chat.env_file) ? chat.env_file : [chat.env_file]) as (
      | { path: string; required?: boolean }
      | string
    )[];
    for (const file of envFiles)
      expect(typeof file === "object" && file.required === false, "an optional .env").toBe(true);
    expect(chat.depends_on).toEqual({
      redis: { condition: "service_healthy" },
      model: { condition: "service_started" },
    });
    // The wait happens in the chat (a status line), so the flag must be one main.ts knows.
    expect(read("src/app/chat-command.ts")).toContain('"--wait-for-model"');
  });
});

describe("Dockerfile", () => {
  it("is multi-stage: a build stage compiles, the runtime stage takes only the output", () => {
    const all = stages();
    expect(all.length).toBeGreaterThanOrEqual(2);
    const [build] = all;
    const runtime = all.at(-1)!;
    expect(build!.body.some((i) => i.op === "RUN" && /npm ci\b/.test(i.args) && !/--omit=dev/.test(i.args))).toBe(true);
    expect(build!.body.some((i) => i.op === "RUN" && /npm run build\b/.test(i.args))).toBe(true);
    expect(runtime.body.some((i) => i.op === "RUN" && /npm ci\b.*--omit=dev/.test(i.args))).toBe(true);
    const fromBuild = runtime.body.filter((i) => i.op === "COPY" && i.args.startsWith(`--from=${build!.name} `));
    expect(fromBuild.map((i) => i.args.split(/\s+/)[1])).toEqual(["/app/dist"]);
    expect(runtime.body.some((i) => i.op === "USER" && i.args !== "root")).toBe(true);
  });

  it("starts what package.json builds and starts: dist/main.js", () => {
    const cmd = instructions()
      .filter((i) => i.op === "CMD")
      .at(-1);
    expect(JSON.parse(cmd!.args)).toEqual(["node", packageJson.main]);
    expect(packageJson.main).toBe("dist/main.js");
    expect(packageJson.scripts.start).toBe(`node ${packageJson.main}`);
    // tsc (tsconfig.build.json) turns src/main.ts into dist/main.js.
    const build = JSON.parse(read("tsconfig.build.json")) as { compilerOptions: { rootDir: string; outDir: string } };
    expect(packageJson.scripts.build).toContain("tsconfig.build.json");
    expect(`${build.compilerOptions.outDir}/main.js`).toBe(packageJson.main);
    expect(existsSync(new URL(`${build.compilerOptions.rootDir}/main.ts`, root))).toBe(true);
  });

  it("copies only files that exist and that .dockerignore lets through", () => {
    const ignored = read(".dockerignore")
      .split("\n")
      .map((l) => l.trim().replace(/\/$/, ""))
      .filter((l) => l && !l.startsWith("#"));
    const sources = instructions()
      .filter((i) => i.op === "COPY" && !i.args.startsWith("--from="))
      .flatMap((i) => i.args.split(/\s+/).slice(0, -1));
    expect(sources.length).toBeGreaterThan(0);
    for (const source of sources) {
      expect(existsSync(new URL(source, root)), source).toBe(true);
      expect(
        ignored.some((pattern) => source === pattern || source.startsWith(`${pattern}/`)),
        `${source} is in .dockerignore`,
      ).toBe(false);
    }
  });

  it("names only settings the bot reads, probes /healthz on HTTP_PORT's default, runs a Node the package supports", () => {
    const named = new Set<string>();
    for (const ins of instructions()) {
      // ENV K=V [K2=V2…] or the old ENV K V; ARG K[=default].
      if (ins.op === "ENV" && !ins.args.includes("=")) named.add(ins.args.split(/\s+/)[0]!);
      else if (ins.op === "ENV" || ins.op === "ARG")
        for (const m of ins.args.matchAll(/(?:^|\s)([A-Za-z_][A-Za-z0-9_]*)(?==|\s|$)/g)) named.add(m[1]!);
      for (const m of ins.args.matchAll(/process\.env\.([A-Za-z_][A-Za-z0-9_]*)/g)) named.add(m[1]!);
    }
    expect([...named].filter((v) => !schemaVariables.has(v) && !PLATFORM_VARIABLES.has(v))).toEqual([]);
    const defaultPort = String(envSchema.shape.HTTP_PORT.parse(undefined));
    const healthcheck = instructions().find((i) => i.op === "HEALTHCHECK");
    expect(healthcheck?.args).toContain("/healthz");
    expect(healthcheck?.args).toContain(`process.env.HTTP_PORT||${defaultPort}`);
    expect(instructions().find((i) => i.op === "EXPOSE")?.args).toBe(defaultPort);
    const minimum = Number(/\d+/.exec(packageJson.engines.node)![0]);
    for (const stage of stages()) {
      const major = Number(/^node:(\d+)/.exec(stage.from)?.[1]);
      expect(major, stage.from).toBeGreaterThanOrEqual(minimum);
    }
  });
});
