/**
 * Secrets in other spellings reach log lines too (an error echoing a connection URL, an upper-cased
 * header): the logger must blank them like the secret itself.
 */
import { describe, expect, it } from "vitest";
import { logSink } from "../support/log-sink.js";
import { createLogger } from "../../src/observability/logger.js";

describe("secret spellings in logs", () => {
  it("the URL-encoded Redis password and an upper-cased key are redacted", () => {
    const password = "p@ss/w0rd:with spaces";
    const apiKey = "sk-proj-abcdef0123456789";
    const out = logSink();
    const log = createLogger({ level: "info", secrets: [password, apiKey], destination: out.stream });
    log.warn(`redis error at redis://:${encodeURIComponent(password)}@10.0.0.5:6379`);
    log.warn({ header: `Bearer ${apiKey.toUpperCase()}` }, "proxy echoed the header");
    const text = out.text();
    expect(text).not.toContain(encodeURIComponent(password));
    expect(text.toLowerCase()).not.toContain(apiKey.toLowerCase());
    expect(text).toContain("redis://:[redacted]@10.0.0.5:6379");
    expect(text).toContain("Bearer [redacted]");
  });
});
