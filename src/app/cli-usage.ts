/** The text of `node dist/main.js --help`: the roles, the commands, and where settings come from. */

const DESCRIPTIONS: Record<string, string> = {
  all: "adapters, worker and the HTTP port in one process (the default; npm start)",
  bots: "only the platform adapters: receive, validate, enqueue",
  worker: "only the worker: answers from the queue (run as many as you like)",
  chat: "chat in the terminal through the same queue and worker, no token needed (npm run chat); --wait-for-model waits for the model server",
  doctor:
    "check the set-up: Redis, the model server, Telegram, Discord; one line each with the fix (npm run doctor); --json for automation; exit code 0 when all pass",
};

/** Usage text listing every role and command. */
export function usage(roles: readonly string[], commands: readonly string[]): string {
  const width = Math.max(...[...roles, ...commands].map((name) => name.length));
  const line = (name: string) => `  ${name.padEnd(width)}  ${DESCRIPTIONS[name] ?? ""}`;
  return [
    "usage: node dist/main.js [role | command] [options]",
    "",
    "roles:",
    ...roles.map(line),
    "",
    "commands:",
    ...commands.map(line),
    `  ${"--help".padEnd(width)}  this text`,
    "",
    'one question straight through the agent loop: npm run ask -- "your question"',
    "settings: environment variables, after ./.env (or the file ENV_FILE names) is read; variables already set win.",
    "",
  ].join("\n");
}
