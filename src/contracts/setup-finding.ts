/** fail: a mistake the bot will suffer from; warn: a risk worth knowing (run still passes); skip: not configured. */
export type SetupStatus = "pass" | "fail" | "warn" | "skip";

/** One result of a set-up check (`doctor`), spoken by the doctor and the platform adapters alike. */
export interface SetupFinding {
  /** The group the check belongs to ("Redis", "Model server", "Telegram", …). */
  group: string;
  /** Short name of the check within its group ("answers", "eviction", …). */
  check: string;
  status: SetupStatus;
  /** What was found, in one sentence. */
  detail: string;
  /** On a failure: what to change, concretely (a flag, a setting, a page of a portal). */
  fix?: string;
}

/** Builds a finding for one group (keeps each check function to one line per outcome). */
export function findingsOf(group: string): {
  pass(check: string, detail: string): SetupFinding;
  fail(check: string, detail: string, fix: string): SetupFinding;
  warn(check: string, detail: string, fix: string): SetupFinding;
  skip(check: string, detail: string): SetupFinding;
} {
  return {
    pass: (check, detail) => ({ group, check, status: "pass", detail }),
    fail: (check, detail, fix) => ({ group, check, status: "fail", detail, fix }),
    warn: (check, detail, fix) => ({ group, check, status: "warn", detail, fix }),
    skip: (check, detail) => ({ group, check, status: "skip", detail }),
  };
}
