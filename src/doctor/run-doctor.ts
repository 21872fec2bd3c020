/** `npm run doctor [-- --json]`: one line per check (✓ / ✗ with the fix) or JSON; exits 0 only if nothing failed. */
import type { Config } from "../config/env-schema.js";
import type { SetupFinding } from "../contracts/setup-finding.js";
import { redactSecrets } from "../observability/logger.js";
import { configuredSecrets } from "../security/configured-secrets.js";
import { DOCTOR_CHECK_GROUPS, type DoctorCheckGroup } from "./check-groups.js";

/** The doctor's verdict: every finding, and whether all of them passed (skips count as passing). */
export interface DoctorReport {
  ok: boolean;
  findings: SetupFinding[];
}

/** Runs the groups one after another (their output order is the report's); a group that throws becomes a failure, never a crash. */
export async function runDoctor(
  config: Config,
  groups: readonly DoctorCheckGroup[] = DOCTOR_CHECK_GROUPS,
): Promise<DoctorReport> {
  const findings: SetupFinding[] = [];
  for (const group of groups) {
    const skip = group.skipReason(config);
    if (skip !== undefined) {
      findings.push({ group: group.name, check: "configured", status: "skip", detail: `${skip}: skipped` });
      continue;
    }
    try {
      findings.push(...(await group.run(config)));
    } catch (error) {
      findings.push({
        group: group.name,
        check: "checks",
        status: "fail",
        detail: `the checks themselves failed: ${(error as Error).message}`,
        fix: "run the doctor again; report this if it persists",
      });
    }
  }
  // A token or key must never be printed, whatever an error message carried.
  const secrets = configuredSecrets(config);
  const clean = findings.map((finding) => JSON.parse(redactSecrets(JSON.stringify(finding), secrets)) as SetupFinding);
  return { ok: clean.every((finding) => finding.status !== "fail"), findings: clean };
}

const MARK = { pass: "✓", fail: "✗", warn: "!", skip: "–" } as const;

/** One line per finding, then a one-line verdict. */
export function formatReport(report: DoctorReport): string {
  const lines = report.findings.map((finding) => {
    const line = `${MARK[finding.status]} ${finding.group} · ${finding.check}: ${finding.detail}`;
    return finding.fix ? `${line} → fix: ${finding.fix}` : line;
  });
  const failed = report.findings.filter((finding) => finding.status === "fail").length;
  lines.push(failed === 0 ? "All checks passed." : `${failed} check${failed === 1 ? "" : "s"} failed.`);
  return `${lines.join("\n")}\n`;
}

/** The doctor command: prints the report (text or `--json`) and returns the exit code. */
export async function doctorCommand(
  config: Config,
  args: readonly string[],
  out: (text: string) => void,
): Promise<number> {
  const report = await runDoctor(config);
  out(args.includes("--json") ? `${JSON.stringify(report, null, 2)}\n` : formatReport(report));
  return report.ok ? 0 : 1;
}
