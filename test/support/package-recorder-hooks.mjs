/** Module hooks of package-recorder.mjs: each npm package resolved is appended to the log once. */
import { appendFileSync } from "node:fs";

let log;
const seen = new Set();

/** Receives the log file's path from register(). */
export function initialize(data) {
  log = data.log;
}

/** Passes resolution on unchanged, noting the package the result lies in. */
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  // The last node_modules segment names the package (a dependency may sit inside another's folder).
  const name = [...resolved.url.matchAll(/\/node_modules\/((?:@[^/]+\/)?[^/]+)/g)].pop()?.[1];
  if (name && log && !seen.has(name)) {
    seen.add(name);
    appendFileSync(log, `${name}\n`);
  }
  return resolved;
}
