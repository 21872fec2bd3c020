/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * The web chat in Debian's Chromium: the design's two questions answered through the queue and
 * a real worker against the fake model server and the fake web, drawn live (tool calls running
 * together, their results, the answer typing out) and again after a reload; stop mid-answer;
 * hostile Markdown rendered inert. The page's changes are recorded by a MutationObserver the
 * test installs, so the order of what the user saw is asserted, not guessed.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { paced, textAnswer, toolCallAnswer } from "../fakes/openai-server.js";
import { launchChromium, type TestBrowser } from "./chromium.js";
import { ask, buildWebBundle, signIn, startWebRig, USER, type WebRig } from "./web-harness.js";

/** One snapshot of the page per DOM change. */
interface Frame {
  t: number;
  running: number;
  done: number;
  /** Characters of the answer (not a preamble) shown. */
  answer: number;
}

let bundle: { dir: string; remove(): void };
let browser: TestBrowser;
let rig: WebRig;

beforeAll(async () => {
  bundle = await buildWebBundle();
  browser = await launchChromium();
  await browser.context.addInitScript(() => {
    const w = window as unknown as { __frames: Frame[] };
    w.__frames = [];
    const t0 = performance.now();
    const snap = () => {
      const cards = [...document.querySelectorAll<HTMLElement>(".tool")];
      const texts = [...document.querySelectorAll(".answer .text:not(.preamble)")];
      w.__frames.push({
        t: performance.now() - t0,
        running: cards.filter((c) => c.dataset.status === "running").length,
        done: cards.filter((c) => c.dataset.status === "done").length,
        answer: texts.map((e) => e.textContent ?? "").join("").length,
      });
    };
    new MutationObserver(snap).observe(document, {
      subtree: true,
      childList: true,
      attributes: true,
      characterData: true,
    });
  });
});
afterAll(async () => {
  await browser?.close();
  bundle?.remove();
});
beforeEach(async () => {
  rig = await startWebRig(bundle.dir);
});
afterEach(async () => {
  for (const page of browser.context.pages()) await page.close();
  await browser.context.clearCookies();
  await rig?.close();
});

const frames = (page: Page) => page.evaluate(() => (window as unknown as { __frames: Frame[] }).__frames);
const answerText = (page: Page) => page.locator(".turn").last().locator(".answer .text:not(.preamble)").innerText();
const toolMessages = (body: { messages: { role: string; content: unknown }[] } | undefined) =>
  (body?.messages ?? []).filter((m) => m.role === "tool").map((m) => JSON.parse(m.content as string) as unknown);

async function signedIn(): Promise<Page> {
  const page = await browser.context.newPage();
  await page.setViewportSize({ width: 420, height: 860 });
  await signIn(page, rig.base, USER.name, USER.password);
  await page.locator("textarea").waitFor();
  return page;
}

describe("web chat in Chromium", () => {
  it("北京和上海哪里更热: two tool calls start together, then their results, then the answer types out; the same after a reload", async () => {
    rig.web.setDelay("/", 700); // each weather answer takes 0.7 s: both calls are seen running at once
    rig.model.script([
      toolCallAnswer(
        [
          { name: "get_weather", arguments: { city: "北京" } },
          { name: "get_weather", arguments: { city: "上海" } },
        ],
        { interleave: true, reasoning: "The user compares two cities: call get_weather for both at once." },
      ),
      (request) => {
        const [a, b] = toolMessages(request.body as never) as { city: string; temperature_c: number }[];
        const hotter = a!.temperature_c >= b!.temperature_c ? a! : b!;
        return paced(
          textAnswer(`今天**${hotter.city}**更热，气温 ${hotter.temperature_c}°C。北京和上海的天气都已查到。`),
          25,
        );
      },
    ]);
    const page = await signedIn();
    await ask(page, "北京和上海今天哪里更热？");

    await expect
      .poll(() => answerText(page), { timeout: 20_000 })
      .toMatch(/^今天(北京|上海)更热，气温 -?\d+°C。北京和上海的天气都已查到。$/);
    await page.locator(".turn.done").waitFor();
    const seen = await frames(page);
    const together = seen.findIndex((f) => f.running === 2);
    const bothDone = seen.findIndex((f) => f.done === 2);
    const firstWord = seen.findIndex((f) => f.answer > 0);
    // Both calls were on screen running at the same moment, before any result; the answer only after both results.
    expect(together).toBeGreaterThanOrEqual(0);
    expect(seen.slice(0, together).every((f) => f.done === 0)).toBe(true);
    expect(bothDone).toBeGreaterThan(together);
    expect(firstWord).toBeGreaterThan(bothDone);
    // Typing out: the answer grew through several lengths, not in one jump.
    const lengths = new Set(seen.slice(firstWord).map((f) => f.answer));
    expect(lengths.size).toBeGreaterThanOrEqual(4);

    // The cards name the tool and its arguments; reasoning is there, collapsed.
    const cards = page.locator(".tool");
    await expect
      .poll(() => cards.allInnerTexts())
      .toEqual([
        expect.stringMatching(/get_weather[\s\S]*北京[\s\S]*done/),
        expect.stringMatching(/get_weather[\s\S]*上海[\s\S]*done/),
      ]);
    const reasoning = page.locator("details.reasoning");
    expect(await reasoning.count()).toBe(1);
    expect(await reasoning.evaluate((d) => (d as HTMLDetailsElement).open)).toBe(false);
    expect(await page.locator("strong", { hasText: /北京|上海/ }).count()).toBe(1);
    // A result is shortened, and the whole of it is one click away.
    const result = page.locator(".tool-result").first();
    await result.locator("summary").click();
    expect(await result.locator("pre").innerText()).toContain("temperature_c");
    if (process.env.WEB_SCREENSHOTS) await page.screenshot({ path: "docs/web-chat.png" });

    const answered = await answerText(page);
    await page.reload();
    await expect.poll(() => answerText(page)).toBe(answered);
    expect(await page.locator(".user").innerText()).toContain("北京和上海今天哪里更热？");
    expect(await page.locator(".tool[data-status=done]").count()).toBe(2);
    expect(await page.locator("details.reasoning").count()).toBe(1);
  });

  it("今天 AI 新闻里第一条的正文: get_news, then read_url with the first link, then the answer; the same after a reload", async () => {
    let firstLink = "";
    rig.model.script([
      toolCallAnswer([{ name: "get_news", arguments: { topic: "AI" } }]),
      (request) => {
        const items = toolMessages(request.body as never)[0] as { title: string; link: string }[];
        firstLink = items[0]!.link;
        return toolCallAnswer([{ name: "read_url", arguments: { url: firstLink } }]);
      },
      (request) => {
        const page = toolMessages(request.body as never).at(-1) as { title: string };
        return paced(textAnswer(`第一条新闻是《${page.title}》，正文讲的是这件事。`), 30);
      },
    ]);
    const page = await signedIn();
    await ask(page, "今天 AI 新闻里第一条的正文");

    await expect.poll(() => answerText(page), { timeout: 20_000 }).toMatch(/^第一条新闻是《.+》，正文讲的是这件事。$/);
    const rounds = page.locator(".turn").last().locator(".round");
    // One round per step: the news search, then reading the first link it gave.
    await expect
      .poll(() => rounds.locator(".tool").allInnerTexts())
      .toEqual([expect.stringMatching(/get_news[\s\S]*AI[\s\S]*done/), expect.stringMatching(/read_url[\s\S]*done/)]);
    expect(await rounds.nth(1).locator(".tool-args").innerText()).toContain(firstLink);
    const seen = await frames(page);
    expect(seen.findIndex((f) => f.answer > 0)).toBeGreaterThan(seen.findIndex((f) => f.done === 2));

    const answered = await answerText(page);
    await page.reload();
    await expect.poll(() => answerText(page)).toBe(answered);
    expect(await page.locator(".tool[data-status=done]").count()).toBe(2);
  });

  it("Stop mid-answer keeps what was shown, says it stopped, and stays so after a reload", async () => {
    const words = Array.from({ length: 200 }, (_, i) => `word${i}`).join(" ");
    rig.model.script([paced(textAnswer(words), 10)]);
    const page = await signedIn();
    await ask(page, "write a long text");
    await expect
      .poll(async () => (await answerText(page).catch(() => "")).length, { timeout: 20_000 })
      .toBeGreaterThan(20);
    const stop = page.getByRole("button", { name: "Stop" });
    await stop.click();
    await page.locator(".note", { hasText: "stopped" }).waitFor({ timeout: 15_000 });
    const shown = await answerText(page);
    expect(shown.startsWith("word0 word1")).toBe(true);
    expect(shown).not.toContain("word199");
    expect(await stop.isHidden()).toBe(true);
    // The stored turn keeps what the user saw (history), and the page shows the same after a reload.
    await page.reload();
    await expect.poll(() => answerText(page)).toBe(shown);
    await page.locator(".note", { hasText: "stopped" }).waitFor();
  });

  it("renders a hostile answer inert: no script runs, no image loads, no javascript: link", async () => {
    rig.model.script([
      textAnswer(
        'Here: <script>window.pwned = "script"</script> and <img src="http://127.0.0.1:1/x.png" onerror="window.pwned = \'img\'"> ' +
          "and [click me](javascript:window.pwned='link') and [fine](https://example.org/a).",
      ),
    ]);
    const page = await signedIn();
    const requests: string[] = [];
    page.on("request", (r) => requests.push(r.url()));
    const response = await page.reload();
    expect(response?.headers()["content-security-policy"]).toContain("script-src 'self'");
    await ask(page, "say something hostile");
    await expect.poll(() => answerText(page), { timeout: 20_000 }).toContain("and fine.");
    const answer = page.locator(".turn").last().locator(".answer");
    expect(await answer.innerText()).toContain('<script>window.pwned = "script"</script>');
    expect(await answer.innerText()).toContain("onerror=");
    expect(await answer.locator("script, img, iframe").count()).toBe(0);
    // Links are http(s) only (an address written in the text is one too, and loads nothing until clicked).
    const hrefs = await answer.locator("a").evaluateAll((links) => links.map((a) => a.getAttribute("href") ?? ""));
    expect(hrefs).toContain("https://example.org/a");
    expect(hrefs.every((href) => /^https?:\/\//.test(href))).toBe(true);
    expect(await answer.getByRole("link", { name: "click me" }).count()).toBe(0);
    await answer.getByText("click me").click();
    expect(await page.evaluate(() => (window as unknown as { pwned?: string }).pwned)).toBeUndefined();
    expect(requests.filter((u) => u.includes("x.png") || u.startsWith("javascript:"))).toEqual([]);
  });

  it("follows the chat's /reasoning: folded by default, open or hidden from the menu, and so after a reload", async () => {
    rig.model.script([textAnswer("Paris.", { reasoning: "The capital of France is Paris." })]);
    const page = await signedIn();
    await ask(page, "capital of France?");
    await page.locator(".turn.done").waitFor({ timeout: 20_000 });
    const details = page.locator("details.reasoning");
    expect(await details.evaluate((d) => (d as HTMLDetailsElement).open)).toBe(false);

    await page.locator("select.think").selectOption("/reasoning full");
    await expect.poll(() => details.evaluate((d) => (d as HTMLDetailsElement).open)).toBe(true);
    expect(await details.innerText()).toContain("The capital of France is Paris.");
    await page.reload();
    await expect.poll(() => details.evaluate((d) => (d as HTMLDetailsElement).open).catch(() => false)).toBe(true);

    await page.locator("select.think").selectOption("/reasoning off");
    await expect.poll(() => details.isVisible()).toBe(false);
    expect(await answerText(page)).toBe("Paris.");
  });
});
