/** What a probe and a scraper do against the ops server, plus bounded polling. */
import { expect, vi } from "vitest";
import { parsePrometheusText, type Exposition } from "./prometheus-text.js";

/** A /healthz answer. */
export interface Health {
  status: number;
  body: { status: string; checks: Record<string, string> };
}

/** GET /healthz. */
export async function healthz(base: string): Promise<Health> {
  const res = await fetch(`${base}/healthz`, { signal: AbortSignal.timeout(5000) });
  return { status: res.status, body: (await res.json()) as Health["body"] };
}

/** GET /metrics, checked to be Prometheus text, parsed. */
export async function scrape(base: string): Promise<Exposition> {
  const res = await fetch(`${base}/metrics`, { signal: AbortSignal.timeout(5000) });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheusText(await res.text());
}

/** Polls `check` (vitest's `vi.waitFor`) until it returns something truthy; throws naming `what` after `timeoutMs`. */
export function waitFor<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 12_000): Promise<T> {
  return vi.waitFor(
    async () => {
      const value = await check();
      if (!value) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
      return value;
    },
    { timeout: timeoutMs, interval: 50 },
  );
}
