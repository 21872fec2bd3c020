/**
 * Preloaded into a role process (`NODE_OPTIONS=--import=…/package-recorder.mjs`) by the tests
 * that check which libraries a role loads: registers package-recorder-hooks.mjs, which appends
 * the name of every npm package the process resolves to the file named by PACKAGES_LOG. Plain
 * JavaScript because it loads before tsx does.
 */
import { register } from "node:module";

if (process.env.PACKAGES_LOG)
  register(new URL("./package-recorder-hooks.mjs", import.meta.url), { data: { log: process.env.PACKAGES_LOG } });
