/**
 * An operator's typo in the environment: the process must stop with one line that names the
 * variable and never shows a password, a token or a query secret (start-up output lands in
 * container logs that many people read), and exit with code 1.
 */
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig, maskedValue } from "../../src/config/load-config.js";

/** Runs `main.ts <role>` with this environment; resolves with its exit code and everything it printed. */
function runMain(env: Record<string, string>, role = "worker"): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", "src/main.ts", role], {
      env: { PATH: process.env.PATH ?? "", HTTP_PORT: "0", ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr.on("data", (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

function configProblem(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error("the configuration was accepted");
}

describe("bad values in the environment", () => {
  it("REDIS_URL without its '://' stops the process with one line naming it, no password, exit 1", async () => {
    const { code, output } = await runMain({ REDIS_URL: "redis//:hunter2@h" });
    expect(code).toBe(1);
    expect(output).not.toContain("hunter2");
    expect(output.trim().split("\n")).toHaveLength(1);
    expect(output).toMatch(/^Invalid configuration: REDIS_URL: expected a URL \(redis, rediss\)/);
    expect(output).not.toMatch(/\bat .+:\d+:\d+/); // no stack trace
  }, 30_000);

  it("REDIS_URL with a literal % in its password is refused at validation: one line, no password, exit 1", async () => {
    expect(configProblem({ REDIS_URL: "redis://:s3cret%ZZpw@cache.internal:6379" })).toBe(
      'Invalid configuration: REDIS_URL: expected a URL whose user and password are percent-encoded (write a literal % as %25) (got "redis://***@cache.internal:6379")',
    );
    expect(loadConfig({ REDIS_URL: "redis://:s3cret%25ZZpw@cache.internal:6379" }).REDIS_URL).toContain("%25");
    const { code, output } = await runMain({ REDIS_URL: "redis://:s3cret%ZZpw@127.0.0.1:6379" });
    expect(code).toBe(1);
    expect(output).not.toContain("s3cret");
    expect(output.trim().split("\n")).toHaveLength(1);
    expect(output).not.toMatch(/\bat .+:\d+:\d+/);
  }, 30_000);

  it("credentials and query values of bad URLs are masked in the message", () => {
    const message = configProblem({
      REDIS_URL: "http://admin:s3cr3tpass@cache.internal:6379",
      OPENAI_BASE_URL: "ftp://bob:pa55word@models.internal/v1?api_key=sk-live-123",
      WEATHER_API_BASE: "not a url?key=weatherkey987",
    });
    for (const secret of ["s3cr3tpass", "admin", "pa55word", "bob", "sk-live-123", "weatherkey987"])
      expect(message).not.toContain(secret);
    expect(message).toContain(
      'REDIS_URL: expected a URL with scheme redis or rediss (got "http://***@cache.internal:6379")',
    );
    expect(message).toContain(
      'OPENAI_BASE_URL: expected a URL with scheme http or https (got "ftp://***@models.internal/v1?api_key=***")',
    );
    expect(message).toContain("WEATHER_API_BASE: expected a URL (http, https)");
    expect(message.split("\n")).toHaveLength(1);
  });

  it("a value with a newline cannot forge a second line of the message", () => {
    expect(maskedValue("a\nInvalid: b")).toBe("a\\nInvalid: b");
  });

  it("TELEGRAM_WEBHOOK_URL must be https (Telegram refuses anything else)", () => {
    expect(configProblem({ TELEGRAM_WEBHOOK_URL: "http://bot.example.org/tg" })).toMatch(
      /TELEGRAM_WEBHOOK_URL: expected a URL with scheme https/,
    );
    expect(loadConfig({ TELEGRAM_WEBHOOK_URL: "https://bot.example.org/tg" }).TELEGRAM_WEBHOOK_URL).toBe(
      "https://bot.example.org/tg",
    );
  });

  it("an ADMIN_TOKEN shorter than 16 characters is refused at start, without echoing it", () => {
    const message = configProblem({ ADMIN_TOKEN: "letmein123" });
    expect(message).toMatch(/ADMIN_TOKEN: expected at least 16 characters/);
    expect(message).not.toContain("letmein123");
    expect(loadConfig({ ADMIN_TOKEN: "a-long-enough-admin-token" }).ADMIN_TOKEN).toBe("a-long-enough-admin-token");
  });
});
