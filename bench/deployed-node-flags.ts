/**
 * The Node flags a role runs with as deployed: docker-compose.yml's `command` for the role's service,
 * the arguments between `node` and `dist/main.js`. The benchmark starts its role processes with the
 * same flags, so the memory it reports is that of the deployment, and a flag changed there is measured.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";

/** The node flags of `service` in a compose file's text. */
export function nodeFlagsOf(composeText: string, service: string): string[] {
  const compose = parse(composeText, { merge: true }) as { services?: Record<string, { command?: unknown }> } | null;
  const entry = compose?.services?.[service];
  if (!entry) throw new Error(`docker-compose.yml has no service "${service}"`);
  const argv = entry.command;
  if (!Array.isArray(argv)) throw new Error(`service "${service}" has no list-form command`);
  if (argv[0] !== "node") throw new Error(`service "${service}": command is not a node invocation`);
  const main = argv.indexOf("dist/main.js");
  if (main < 0) throw new Error(`service "${service}": command does not run dist/main.js`);
  return argv.slice(1, main).map(String);
}

/** The node flags of the role's service in the repository's docker-compose.yml. */
export function deployedNodeFlags(repoRoot: string, role: "worker" | "bots"): string[] {
  return nodeFlagsOf(readFileSync(join(repoRoot, "docker-compose.yml"), "utf8"), role);
}
