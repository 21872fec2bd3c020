/** Entry point: `node dist/main.js [all|bots|worker|chat]`. */
import { ConfigError, loadConfig } from "./config/load-config.js";

function main(): void {
  let config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(error.message + "\n");
      process.exit(2);
    }
    throw error;
  }
  const role = process.argv[2] ?? "all";
  process.stderr.write(`role ${role} is not wired yet (model ${config.MODEL})\n`);
  process.exit(1);
}

main();
