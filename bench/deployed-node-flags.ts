/**
 * The Node flags a role runs with as deployed: docker-compose.yml's `command` for the role's service,
 * the arguments between `node` and `dist/main.js`. The benchmark starts its role processes with the
 * same flags, so the memory it reports is that of the deployment, and a flag changed there is measured.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

/** The node flags of `service` in a compose file's text (a top-level service with a JSON-array command). */
export function nodeFlagsOf(composeText: string, service: string): string[] {
  const lines = composeText.split("\n");
  const start = lines.findIndex((line) => line === `  ${service}:`);
  if (start < 0) throw new Error(`docker-compose.yml has no service "${service}"`);
  for (const line of lines.slice(start + 1)) {
    if (/^ {0,2}\S/.test(line)) break; // the next service (or top-level key): no command here
    const command = /^ {4}command:\s*(\[.*\])\s*$/.exec(line);
    if (!command?.[1]) continue;
    const argv = JSON.parse(command[1]) as unknown;
    if (!Array.isArray(argv) || argv[0] !== "node") throw new Error(`service "${service}": command is not a node invocation`);
    const main = argv.indexOf("dist/main.js");
    if (main < 0) throw new Error(`service "${service}": command does not run dist/main.js`);
    return argv.slice(1, main).map(String);
  }
  throw new Error(`service "${service}" has no JSON-array command`);
}

/** The node flags of the role's service in the repository's docker-compose.yml. */
export function deployedNodeFlags(repoRoot: string, role: "worker" | "bots"): string[] {
  return nodeFlagsOf(readFileSync(join(repoRoot, "docker-compose.yml"), "utf8"), role);
}
