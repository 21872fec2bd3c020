/**
 * The fixtures' own promise: what a test started is stopped after it, last started first,
 * also when the test failed, and a thing the test already stopped itself is not stopped twice.
 * The tests run in order; each later one reads what the earlier one left behind.
 */
import { describe, expect } from "vitest";
import { e2eTest } from "./fixtures.js";

const closed: string[] = [];
let modelUrl = "";
let webUrl = "";

/** Whether anything still answers HTTP at `url`. */
async function answers(url: string): Promise<boolean> {
  try {
    await fetch(url, { signal: AbortSignal.timeout(2000) });
    return true;
  } catch {
    return false;
  }
}

describe("e2eTest fixtures", () => {
  e2eTest.fails("a test that fails after starting servers", async ({ fakeModel, fakeWeb, closeAfter }) => {
    const model = await fakeModel();
    const web = await fakeWeb();
    modelUrl = `${model.url}/models`;
    webUrl = web.url;
    closeAfter({ close: () => void closed.push("first") });
    closeAfter({ close: () => void closed.push("second") });
    expect(await answers(modelUrl)).toBe(true);
    throw new Error("the scenario failed");
  });

  e2eTest("after a failed test its servers are stopped and its closers ran last first", async () => {
    expect(closed).toEqual(["second", "first"]);
    expect(await answers(modelUrl)).toBe(false);
    expect(await answers(webUrl)).toBe(false);
  });

  e2eTest("a thing the test stopped itself is stopped only once", async ({ closeAfter }) => {
    closed.length = 0;
    const adapter = closeAfter({ close: () => void closed.push("adapter") });
    await adapter.close();
    expect(closed).toEqual(["adapter"]);
  });

  e2eTest("…and the fixture did not stop it again", () => {
    expect(closed).toEqual(["adapter"]);
  });

  let webPort = 0;
  e2eTest("the file's fake web is shared: a test slows it down and is asked once", async ({ web }) => {
    webPort = web.port;
    web.setDelay("*", 3000);
    await fetch(`${web.url}/London?format=j1`);
    expect(web.requests).toHaveLength(1);
  });

  e2eTest("…and the next test gets the same web, quick again and with nothing recorded", async ({ web }) => {
    expect(web.port).toBe(webPort);
    expect(web.requests).toEqual([]);
    const started = Date.now();
    await fetch(`${web.url}/London?format=j1`);
    expect(Date.now() - started).toBeLessThan(1500);
  });
});
