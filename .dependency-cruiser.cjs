/**
 * The architecture as rules: the folders of src/ are layers, and each may import only the
 * layers below it (so no cycle between folders can form), platform libraries stay in the
 * adapters, the model client stays out of them, and only the composition root (src/app,
 * src/main.ts, src/ask.ts) wires everything together. Run by `npm run check:deps` (and so
 * by `.ci/run`).
 */
const layer = (name, mayImport) => ({
  name: `layer-${name}`,
  comment: `src/${name} may import only: ${mayImport.join(", ") || "nothing else in src"}`,
  severity: "error",
  from: { path: `^src/${name}/` },
  to: { path: "^src/", pathNot: `^src/(${[name, ...mayImport].join("|")})/` },
});

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "modules form no import cycle, not even through type-only imports",
      severity: "error",
      from: { path: "^src/" },
      to: { circular: true },
    },
    // Leaves.
    layer("contracts", []),
    layer("config", []),
    layer("shared", []),
    layer("redis", []),
    layer("security", ["config"]),
    // Building blocks.
    layer("observability", ["config", "contracts", "redis", "security", "shared"]),
    layer("tools", ["contracts", "shared"]),
    layer("agent", ["config", "contracts", "shared", "tools"]),
    layer("history", ["contracts", "redis", "shared", "tokens"]),
    layer("reply", ["contracts", "redis", "shared"]),
    layer("queue", ["contracts", "redis", "shared"]),
    layer("ingress", ["contracts", "observability", "queue", "redis", "shared"]),
    // The web chat keeps its sessions and event streams in Redis itself (src/bots/web), so bots may name Redis keys.
    layer("bots", ["contracts", "observability", "redis", "security", "shared"]),
    // Speech to text and text to speech through OpenAI-compatible servers, and what OGG audio says about itself.
    layer("voice", ["contracts", "shared"]),
    // Pictures and files from the chat, made ready for the model (platform-free: files come through the contracts' FileSource).
    layer("attachments", ["contracts", "shared", "voice"]),
    layer("settings", ["contracts", "redis", "shared", "tools"]),
    layer("tokens", ["contracts", "shared"]),
    // Reminders and repeating prompts: their records, BullMQ delivery and the tools the model calls.
    layer("schedules", ["contracts", "redis", "shared", "tools"]),
    // Where agent, reply, history and queue meet.
    layer("answer", [
      "agent",
      "attachments",
      "contracts",
      "history",
      "observability",
      "queue",
      "redis",
      "reply",
      "security",
      "settings",
      "shared",
      "tokens",
      "voice",
    ]),
    {
      name: "adapters-stay-apart",
      comment: "one platform's adapter never reaches into another's",
      severity: "error",
      from: { path: "^src/bots/([^/]+)/" },
      to: { path: "^src/bots/([^/]+)/", pathNot: "^src/bots/$1/" },
    },
    {
      name: "platform-libraries-only-in-adapters",
      comment:
        "grammY and discord.js are the adapters' business (and the composition root's, which builds their clients)",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/(bots|app)/|^src/main\\.ts$" },
      to: { dependencyTypes: ["npm"], path: "(^|/)node_modules/(grammy|@grammyjs|discord\\.js|@discordjs)/" },
    },
    {
      name: "no-model-client-in-adapters",
      comment: "adapters know nothing of the model",
      severity: "error",
      from: { path: "^src/bots/" },
      to: { path: "(^|/)node_modules/openai/|^src/agent/" },
    },
    {
      name: "composition-root-is-imported-by-no-one",
      comment: "only the entry points import the roles",
      severity: "error",
      from: { path: "^src/", pathNot: "^src/app/|^src/main\\.ts$|^src/ask\\.ts$" },
      to: { path: "^src/app/|^src/main\\.ts$|^src/ask\\.ts$" },
    },
    {
      name: "src-does-not-import-tests",
      severity: "error",
      from: { path: "^src/" },
      to: { path: "^(test|bench)/" },
    },
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    exclude: { path: "\\.test\\.ts$" },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" },
    enhancedResolveOptions: {
      exportsFields: ["exports"],
      conditionNames: ["import", "require", "node", "default", "types"],
      extensions: [".ts", ".js"],
    },
  },
};
