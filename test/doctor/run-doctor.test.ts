/** The doctor's runner and report: groups in order, skips, a group that throws, no secret ever printed, the verdict. */
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/load-config.js";
import { formatReport, runDoctor } from "../../src/doctor/run-doctor.js";
import { DOCTOR_CHECK_GROUPS } from "../../src/doctor/check-groups.js";
import { safeUrl } from "../../src/redis/connection.js";
import { configuredSecrets } from "../../src/security/configured-secrets.js";
import type { DoctorCheckGroup } from "../../src/doctor/check-groups.js";

const TOKEN = "7000000001:AAsecretSecretSecretSecret";

const groups: DoctorCheckGroup[] = [
  {
    name: "Fine",
    skipReason: () => undefined,
    run: async () => [{ group: "Fine", check: "one", status: "pass", detail: "all good" }],
  },
  { name: "Absent", skipReason: () => "ABSENT_TOKEN is not set", run: async () => [] },
  {
    name: "Leaky",
    skipReason: () => undefined,
    run: async () => {
      throw new Error(`request to https://api.example/bot${TOKEN}/getMe failed`);
    },
  },
];

describe("doctor runner", () => {
  it("runs the groups in order, skips the unconfigured, turns a throwing group into a failure, and prints no secret", async () => {
    const report = await runDoctor(loadConfig({ TELEGRAM_BOT_TOKEN: TOKEN }), groups);
    expect(report.ok).toBe(false);
    expect(report.findings.map((f) => [f.group, f.check, f.status])).toEqual([
      ["Fine", "one", "pass"],
      ["Absent", "configured", "skip"],
      ["Leaky", "checks", "fail"],
    ]);
    const text = formatReport(report);
    expect(text).not.toContain("AAsecret");
    expect(text.split("\n")).toEqual([
      "✓ Fine · one: all good",
      "– Absent · configured: ABSENT_TOKEN is not set: skipped",
      "✗ Leaky · checks: the checks themselves failed: request to https://api.example/bot[redacted]/getMe failed → fix: run the doctor again; report this if it persists",
      "1 check failed.",
      "",
    ]);
  });

  it("skips alone do not fail the run", async () => {
    const report = await runDoctor(loadConfig({}), groups.slice(0, 2));
    expect(report.ok).toBe(true);
    expect(formatReport(report).trim().split("\n").at(-1)).toBe("All checks passed.");
  });

  it("URL credentials (user:password@, ?password=, ?key=) are never printed by the real checks", async () => {
    const config = loadConfig({
      REDIS_URL: "redis://127.0.0.1:9/?password=redisQuerySecret",
      OPENAI_BASE_URL: "http://bob:pa55word-model@127.0.0.1:9/v1?key=sk-query-secret",
    });
    const groups = DOCTOR_CHECK_GROUPS.filter((g) => g.name === "Redis" || g.name === "Model server");
    expect(groups).toHaveLength(2);
    const text = formatReport(await runDoctor(config, groups));
    expect(text).toContain("127.0.0.1:9");
    for (const secret of ["redisQuerySecret", "pa55word-model", "sk-query-secret"]) expect(text).not.toContain(secret);
    expect(configuredSecrets(config)).toEqual(
      expect.arrayContaining(["redisQuerySecret", "pa55word-model", "sk-query-secret"]),
    );
    expect(safeUrl("redis://user:hunter22@h:6379/0?password=other-secret&db=1")).toBe(
      "redis://***@h:6379/0?password=***&db=***",
    );
  });
});
