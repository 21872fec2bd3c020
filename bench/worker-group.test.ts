import { describe, expect, it } from "vitest";
import type { ProbeReply } from "./probe-protocol.js";
import type { LogLine, RoleProcess } from "./role-process.js";
import { combineSamples, profilePathOf, workerGroup } from "./worker-group.js";

const reply = (over: Partial<ProbeReply>): ProbeReply => ({
  id: 1,
  cpuMicros: 0,
  systemMicros: 0,
  rssBytes: 0,
  peakRssBytes: 0,
  maxRssBytes: 0,
  loopDelayP99Ms: 0,
  loopDelayMaxMs: 0,
  ...over,
});

/** A stand-in role process: answers samples from `sample`, remembers profile paths, lets a test emit log lines. */
function fakeProcess(pid: number, sample: ProbeReply) {
  const listeners = new Set<(line: LogLine) => void>();
  const profiles: string[] = [];
  const process: RoleProcess = {
    role: "worker",
    pid,
    sample: async () => sample,
    collectGarbage: async () => sample,
    startProfile: async () => undefined,
    stopProfile: async (path) => void profiles.push(path),
    onLog(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    warnings: pid,
    tail: () => `tail of ${pid}`,
    stop: async () => undefined,
  };
  return { process, profiles, log: (line: LogLine) => listeners.forEach((l) => l(line)) };
}

describe("two worker processes seen as one", () => {
  it("adds up their CPU and reports the highest process' memory and loop delay", () => {
    const combined = combineSamples([
      reply({ cpuMicros: 100, systemMicros: 10, rssBytes: 5, peakRssBytes: 9, loopDelayP99Ms: 3 }),
      reply({ cpuMicros: 50, systemMicros: 5, rssBytes: 7, peakRssBytes: 8, loopDelayP99Ms: 4 }),
    ]);
    expect(combined).toMatchObject({ cpuMicros: 150, systemMicros: 15, rssBytes: 7, peakRssBytes: 9 });
    expect(combined.loopDelayP99Ms).toBe(4);
    expect(combineSamples([reply({ gcRan: true }), reply({ gcRan: false })]).gcRan).toBe(false);
  });

  it("passes every process' log lines to a listener until it unsubscribes", async () => {
    const a = fakeProcess(11, reply({ cpuMicros: 1 }));
    const b = fakeProcess(12, reply({ cpuMicros: 2 }));
    const group = workerGroup([a.process, b.process]);
    const seen: unknown[] = [];
    const unsubscribe = group.onLog((line) => seen.push(line.pid));
    a.log({ pid: 11 });
    b.log({ pid: 12 });
    unsubscribe();
    a.log({ pid: 11 });
    expect(seen).toEqual([11, 12]);
    expect((await group.sample()).cpuMicros).toBe(3);
    expect(group.warnings).toBe(23);
    expect(group.tail()).toMatch(/tail of 11[\s\S]*tail of 12/);
  });

  it("writes the first worker's profile where asked and the others beside it, numbered", async () => {
    expect(profilePathOf("/tmp/p/worker-level-100.cpuprofile", 0)).toBe("/tmp/p/worker-level-100.cpuprofile");
    expect(profilePathOf("/tmp/p/worker-level-100.cpuprofile", 1)).toBe("/tmp/p/worker-level-100-w2.cpuprofile");
    const a = fakeProcess(1, reply({}));
    const b = fakeProcess(2, reply({}));
    await workerGroup([a.process, b.process]).stopProfile("/tmp/x.cpuprofile");
    expect([...a.profiles, ...b.profiles]).toEqual(["/tmp/x.cpuprofile", "/tmp/x-w2.cpuprofile"]);
  });

  it("is the process itself when there is one", () => {
    const only = fakeProcess(1, reply({})).process;
    expect(workerGroup([only])).toBe(only);
  });
});
