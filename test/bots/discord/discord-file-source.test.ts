/**
 * The worker's Discord downloads: only Discord's CDN hosts and the configured API's own host, through
 * the safe fetch (a CDN name that resolves to a private address is refused like any read_url target),
 * signed URLs only (the fake CDN answers 404 otherwise, like Discord), and never past the byte limit.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { startFakeDiscord, type FakeDiscord } from "../../fakes/discord-server.js";
import { createDiscordFileSource } from "../../../src/bots/discord/discord-file-source.js";
import { safeDownload } from "../../../src/app/attachments-for-config.js";
import { twoColourPhoto } from "../../support/test-images.js";

let discord: FakeDiscord | undefined;
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  await discord?.close();
  discord = undefined;
  await Promise.all(closers.splice(0).map((c) => c()));
});

const ref = (url: string, size?: number) => ({
  ref: url,
  name: "pic.jpg",
  contentType: "image/jpeg",
  ...(size !== undefined ? { size } : {}),
});

describe("Discord file source", () => {
  it("downloads a signed attachment URL from the fake CDN on the API's host, within the limit", async () => {
    discord = await startFakeDiscord();
    const bytes = await twoColourPhoto(300, 200);
    const message = await discord.userUploads({
      channelId: discord.ids.dm,
      content: "",
      files: [{ filename: "pic.jpg", contentType: "image/jpeg", bytes }],
    });
    const url = message.attachments[0]!.url;
    const source = createDiscordFileSource({ apiBase: discord.apiBase, download: safeDownload() });
    expect(Buffer.from(await source.download(ref(url), { maxBytes: 1_000_000 }))).toEqual(bytes);
    await expect(source.download(ref(url), { maxBytes: 1000 })).rejects.toMatchObject({ code: "too-large" });
    // A URL without its signature is "no longer available" on Discord's CDN.
    await expect(source.download(ref(url.replace(/hm=[0-9a-f]+/, "hm=00")), { maxBytes: 1_000_000 })).rejects.toThrow(
      /could not be downloaded from Discord \(HTTP 404\)/,
    );
  });

  it("refuses any other host without contacting it, and a CDN name resolving to a private address", async () => {
    discord = await startFakeDiscord();
    let contacted = 0;
    const other = createServer((_req, res) => {
      contacted++;
      res.end("secret");
    });
    await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
    closers.push(() => new Promise((resolve) => other.close(() => resolve())));
    const source = createDiscordFileSource({ apiBase: discord.apiBase, download: safeDownload() });
    const port = (other.address() as AddressInfo).port;
    await expect(
      source.download(ref(`http://127.0.0.1:${port}/attachments/1/2/pic.jpg`), { maxBytes: 1000 }),
    ).rejects.toThrow(/not on Discord's CDN/);
    await expect(
      source.download(ref("https://evil.example/attachments/1/2/pic.jpg"), { maxBytes: 1000 }),
    ).rejects.toMatchObject({ code: "refused" });
    await expect(
      source.download(ref("http://cdn.discordapp.com/attachments/1/2/pic.jpg"), { maxBytes: 1000 }),
    ).rejects.toMatchObject({ code: "refused" });
    expect(contacted).toBe(0);

    const rebound = createDiscordFileSource({
      apiBase: "https://discord.com/api",
      download: safeDownload({ lookup: async () => [{ address: "127.0.0.1", family: 4 }] }),
    });
    await expect(
      rebound.download(ref(`https://cdn.discordapp.com/attachments/1/2/pic.jpg`), { maxBytes: 1000 }),
    ).rejects.toMatchObject({
      code: "unavailable",
      message: "pic.jpg could not be downloaded from Discord",
    });
  });
});
