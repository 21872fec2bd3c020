/**
 * Reads a V8 CPU profile of the worker (one level, recorded through the probe) and
 * says where its CPU time went: self time grouped by our source file (src/…), by
 * package, or by V8/Node category, idle and the benchmark's own probe left out.
 */
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Where a frame's code lives: `src/<path>` for ours (under `codeRoot`), the package name, or the V8/Node category. */
export function codeOwner(url: string, functionName: string, codeRoot: string): string {
  const root = pathToFileURL(codeRoot).href.replace(/\/?$/, "/");
  if (url.startsWith(root)) return `src/${url.slice(root.length).replace(/\.js$/, ".ts")}`;
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1] as string;
  if (url.startsWith("node:")) return url;
  if (url === "") return functionName.startsWith("(") ? functionName : `(native) ${functionName}`;
  return "(node internals)";
}

/** Nodes whose stack runs through the benchmark's probe (taking samples, writing the profile): not the bot's work. */
function probeNodes(profile: CpuProfile): Set<number> {
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const probe = new Set<number>();
  for (const n of profile.nodes) {
    for (let at: number | undefined = n.id; at !== undefined; at = parent.get(at)) {
      if (byId.get(at)?.callFrame.url.endsWith("/process-probe.js")) {
        probe.add(n.id);
        break;
      }
    }
  }
  return probe;
}

/** Self time (ms) per owner in the profile at `path`, largest first, idle and the probe excluded. */
export function summariseProfile(path: string, codeRoot: string): { owner: string; ms: number; share: number }[] {
  const totals = new Map<string, number>();
  let busy = 0;
  const profile = JSON.parse(readFileSync(path, "utf8")) as CpuProfile;
  const owners = new Map(
    profile.nodes.map((n) => [n.id, codeOwner(n.callFrame.url, n.callFrame.functionName, codeRoot)]),
  );
  const probe = probeNodes(profile);
  profile.samples.forEach((id, i) => {
    const owner = owners.get(id) ?? "(unknown)";
    if (owner === "(idle)" || probe.has(id)) return;
    const micros = profile.timeDeltas[i] ?? 0;
    busy += micros;
    totals.set(owner, (totals.get(owner) ?? 0) + micros);
  });
  return [...totals.entries()]
    .map(([owner, micros]) => ({ owner, ms: micros / 1000, share: busy > 0 ? micros / busy : 0 }))
    .sort((a, b) => b.ms - a.ms);
}

/** Inclusive time (ms) per file of ours: samples with that file anywhere on the stack, largest first. */
export function inclusiveByOurFile(path: string, codeRoot: string): { owner: string; ms: number; share: number }[] {
  const profile = JSON.parse(readFileSync(path, "utf8")) as CpuProfile;
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id);
  const totals = new Map<string, number>();
  const probe = probeNodes(profile);
  let busy = 0;
  profile.samples.forEach((id, i) => {
    const micros = profile.timeDeltas[i] ?? 0;
    if (byId.get(id)?.callFrame.functionName === "(idle)" || probe.has(id)) return;
    busy += micros;
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)?.callFrame;
      if (!frame) break;
      const owner = codeOwner(frame.url, frame.functionName, codeRoot);
      if (owner.startsWith("src/") && !seen.has(owner)) {
        seen.add(owner);
        totals.set(owner, (totals.get(owner) ?? 0) + micros);
      }
    }
  });
  return [...totals.entries()]
    .map(([owner, micros]) => ({ owner, ms: micros / 1000, share: busy > 0 ? micros / busy : 0 }))
    .sort((a, b) => b.ms - a.ms);
}

/** The summary as printed lines (the `top` largest owners). */
export function formatProfileSummary(path: string, codeRoot: string, top = 12): string {
  const rows = summariseProfile(path, codeRoot).slice(0, top);
  return [
    `profile   worker CPU during this level by code (self time; ${path}):`,
    ...rows.map((r) => `  ${r.ms.toFixed(0).padStart(7)} ms ${(r.share * 100).toFixed(1).padStart(5)}%  ${r.owner}`),
    "          our files, inclusive (the file anywhere on the stack):",
    ...inclusiveByOurFile(path, codeRoot)
      .slice(0, 8)
      .map((r) => `  ${r.ms.toFixed(0).padStart(7)} ms ${(r.share * 100).toFixed(1).padStart(5)}%  ${r.owner}`),
  ].join("\n");
}
