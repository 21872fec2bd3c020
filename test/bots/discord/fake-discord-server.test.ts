/**
 * The fake Discord itself: the real discord.js client must be able to log in, receive, resume
 * and be refused the way Discord refuses it; REST must answer with Discord's status codes,
 * error bodies and rate-limit headers. Other suites build on these guarantees.
 */
import { afterEach, describe, expect, test } from "vitest";
import { Client, Events, GatewayIntentBits, Partials, type Message } from "discord.js";
import { WebSocket } from "ws";
import { startFakeDiscord, type FakeDiscord } from "../../fakes/discord-server.js";

let discord: FakeDiscord;
const clients: Client[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) await client.destroy();
  await discord.close();
});

function newClient(
  intents: number[] = [
    GatewayIntentBits.Guilds,
    GatewayIntentBits.GuildMessages,
    GatewayIntentBits.MessageContent,
    GatewayIntentBits.DirectMessages,
  ],
): Client {
  const client = new Client({ intents, partials: [Partials.Channel], rest: { api: discord.apiBase } });
  clients.push(client);
  return client;
}

async function loggedIn(client: Client): Promise<Client> {
  const ready = new Promise<void>((resolve) => client.once(Events.ClientReady, () => resolve()));
  await client.login(discord.token);
  await ready;
  return client;
}

function collect(client: Client): Message[] {
  const seen: Message[] = [];
  client.on(Events.MessageCreate, (m) => void seen.push(m));
  return seen;
}

/** Calls the REST API like a bot would, returning status, headers and the parsed body. */
async function call(method: string, path: string, body?: unknown, auth = `Bot ${discord.token}`) {
  const res = await fetch(`${discord.apiBase}/v10${path}`, {
    method,
    headers: { authorization: auth, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    body: text ? (JSON.parse(text) as Record<string, any>) : undefined,
  };
}

/** A raw gateway connection, to check the protocol where discord.js would hide it. */
async function rawGateway(): Promise<{ ws: WebSocket; next(): Promise<any>; closed: Promise<number> }> {
  const ws = new WebSocket(`${discord.gatewayUrl}/?v=10&encoding=json`);
  const queue: any[] = [];
  const waiters: ((v: any) => void)[] = [];
  ws.on("message", (data) => {
    const payload = JSON.parse(data.toString());
    const waiter = waiters.shift();
    if (waiter) waiter(payload);
    else queue.push(payload);
  });
  const closed = new Promise<number>((resolve) => ws.on("close", (code) => resolve(code)));
  await new Promise((resolve, reject) => {
    ws.once("open", resolve);
    ws.once("error", reject);
  });
  return {
    ws,
    closed,
    next: () => (queue.length ? Promise.resolve(queue.shift()) : new Promise((resolve) => waiters.push(resolve))),
  };
}

describe("gateway with the real discord.js client", () => {
  test("logs in, sees the guild with its channels and thread, and receives messages in sequence", async () => {
    discord = await startFakeDiscord();
    const client = await loggedIn(newClient());
    const seen = collect(client);

    expect(client.user?.id).toBe(discord.bot.id);
    const guild = client.guilds.cache.get(discord.ids.guild);
    expect(guild?.channels.cache.has(discord.ids.general)).toBe(true);
    expect(guild?.channels.cache.get(discord.ids.thread)?.isThread()).toBe(true);
    expect(discord.gateway.stats.identifies).toBe(1);

    discord.userSays({ channelId: discord.ids.general, author: discord.users.bob, content: "hi all" });
    discord.userSays({ channelId: discord.ids.dm, content: "hi bot" });
    await discord.waitFor(() => seen.length === 2);
    expect(seen[0]?.member?.displayName).toBe("Bobby");
    expect(seen[1]?.channel.isDMBased()).toBe(true);
    const sequence = discord.gateway.sessions[0]!.events.map((e) => e.s);
    expect(sequence).toEqual(sequence.map((_, i) => i + 1));
    expect(discord.gateway.sessions[0]!.events.slice(0, 2).map((e) => e.t)).toEqual(["READY", "GUILD_CREATE"]);
  });

  test("a wrong token is refused at GET /gateway/bot", async () => {
    discord = await startFakeDiscord();
    const client = new Client({ intents: [GatewayIntentBits.Guilds], rest: { api: discord.apiBase } });
    clients.push(client);
    await expect(client.login("not-the-token")).rejects.toThrow(/token/i);
    expect(discord.requests.at(-1)?.status).toBe(401);
  });

  test("a privileged intent not enabled for the bot closes the gateway with 4014", async () => {
    discord = await startFakeDiscord({ privilegedIntents: [] });
    const client = newClient();
    await expect(client.login(discord.token)).rejects.toThrow(/intent/i);
    expect(discord.gateway.stats.closesSent).toContain(4014);
  });

  test("without the MessageContent intent, content arrives only for mentions and DMs", async () => {
    discord = await startFakeDiscord({ privilegedIntents: [] });
    const client = await loggedIn(
      newClient([GatewayIntentBits.Guilds, GatewayIntentBits.GuildMessages, GatewayIntentBits.DirectMessages]),
    );
    const seen = collect(client);
    discord.userSays({ channelId: discord.ids.general, content: "secret chatter" });
    discord.userSays({ channelId: discord.ids.general, content: "for you", mentionsBot: true });
    discord.userSays({ channelId: discord.ids.dm, content: "private" });
    await discord.waitFor(() => seen.length === 3);
    expect(seen.map((m) => m.content)).toEqual(["", `<@${discord.bot.id}> for you`, "private"]);
  });

  test("after a dropped connection the client resumes at resume_gateway_url and gets what it missed", async () => {
    discord = await startFakeDiscord();
    const client = await loggedIn(newClient());
    const seen = collect(client);
    discord.gateway.disconnectAll(4000);
    await discord.waitFor(() => !discord.gateway.sessions[0]!.live);
    discord.userSays({ channelId: discord.ids.general, content: "said while you were away" });

    await discord.waitFor(() => seen.length === 1, { timeoutMs: 5000 });
    expect(seen[0]?.content).toBe("said while you were away");
    expect(discord.gateway.stats.resumes).toBe(1);
    expect(discord.gateway.stats.identifies).toBe(1);
    expect(discord.gateway.stats.paths).toEqual(["/", "/resume-gateway"]);
  });
});

describe("gateway reconnects", () => {
  test("op 7 RECONNECT makes the client resume its session instead of identifying again", async () => {
    discord = await startFakeDiscord();
    const client = await loggedIn(newClient());
    const seen = collect(client);
    discord.gateway.requestReconnect();
    await discord.waitFor(() => discord.gateway.stats.resumes === 1 && discord.gateway.sessions[0]!.live);
    discord.userSays({ channelId: discord.ids.thread, content: "after the reconnect" });
    await discord.waitFor(() => seen.length === 1);
    expect(discord.gateway.stats.identifies).toBe(1);
    expect(discord.gateway.sessions).toHaveLength(1);
  });
});

describe("gateway protocol", () => {
  test("HELLO first, heartbeats ACKed, and a payload before IDENTIFY closes with 4003", async () => {
    discord = await startFakeDiscord({ heartbeatIntervalMs: 45_000 });
    const gw = await rawGateway();
    expect(await gw.next()).toMatchObject({ op: 10, d: { heartbeat_interval: 45_000 } });
    gw.ws.send(JSON.stringify({ op: 1, d: null }));
    expect(await gw.next()).toMatchObject({ op: 11 });
    gw.ws.send(JSON.stringify({ op: 3, d: { status: "online", activities: [], since: null, afk: false } }));
    expect(await gw.closed).toBe(4003);
  });

  test("IDENTIFY with a bad token closes with 4004; an unknown opcode with 4001; a stale RESUME gets op 9", async () => {
    discord = await startFakeDiscord();
    const bad = await rawGateway();
    await bad.next();
    bad.ws.send(JSON.stringify({ op: 2, d: { token: "nope", intents: 513, properties: {} } }));
    expect(await bad.closed).toBe(4004);

    const odd = await rawGateway();
    await odd.next();
    odd.ws.send(JSON.stringify({ op: 99, d: null }));
    expect(await odd.closed).toBe(4001);

    const stale = await rawGateway();
    await stale.next();
    stale.ws.send(JSON.stringify({ op: 6, d: { token: discord.token, session_id: "gone", seq: 3 } }));
    expect(await stale.next()).toMatchObject({ op: 9, d: false });
    stale.ws.close();
  });
});

describe("REST", () => {
  test("every call needs the bot token", async () => {
    discord = await startFakeDiscord();
    const res = await call("GET", "/users/@me", undefined, "Bot wrong");
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ message: "401: Unauthorized", code: 0 });
  });

  test("2000 code points is the limit (an emoji is one), empty messages and unknown messages are refused", async () => {
    discord = await startFakeDiscord();
    const ch = discord.ids.general;
    expect((await call("POST", `/channels/${ch}/messages`, { content: "😀".repeat(2000) })).status).toBe(200);
    const tooLong = await call("POST", `/channels/${ch}/messages`, { content: "a".repeat(2001) });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body).toMatchObject({
      code: 50035,
      errors: { content: { _errors: [{ code: "BASE_TYPE_MAX_LENGTH" }] } },
    });
    expect((await call("POST", `/channels/${ch}/messages`, { content: "  " })).body).toMatchObject({ code: 50006 });
    expect((await call("PATCH", `/channels/${ch}/messages/1234567890123456789`, { content: "x" })).body).toMatchObject({
      code: 10008,
    });
    const said = discord.userSays({ channelId: ch, content: "mine" });
    expect((await call("PATCH", `/channels/${ch}/messages/${said.id}`, { content: "yours" })).body).toMatchObject({
      code: 50005,
    });
  });

  test("a reply to a missing message fails unless fail_if_not_exists is false", async () => {
    discord = await startFakeDiscord();
    const ch = discord.ids.general;
    const ref = { message_id: "1234567890123456789" };
    expect(
      (await call("POST", `/channels/${ch}/messages`, { content: "x", message_reference: ref })).body,
    ).toMatchObject({ code: 50035 });
    const ok = await call("POST", `/channels/${ch}/messages`, {
      content: "x",
      message_reference: { ...ref, fail_if_not_exists: false },
    });
    expect(ok.status).toBe(200);
    expect(ok.body?.message_reference).toBeUndefined();
  });

  test("message writes carry X-RateLimit-* headers; the 6th in 5 s gets 429 and is recorded as a violation", async () => {
    discord = await startFakeDiscord();
    const ch = discord.ids.random;
    const first = await call("POST", `/channels/${ch}/messages`, { content: "1" });
    expect(first.headers.get("x-ratelimit-limit")).toBe("5");
    expect(first.headers.get("x-ratelimit-remaining")).toBe("4");
    expect(Number(first.headers.get("x-ratelimit-reset-after"))).toBeCloseTo(5, 0);
    expect(first.headers.get("x-ratelimit-bucket")).toBeTruthy();
    for (let i = 2; i <= 4; i++) await call("POST", `/channels/${ch}/messages`, { content: String(i) });
    const edit = await call("PATCH", `/channels/${ch}/messages/${first.body?.id}`, { content: "edited" });
    expect(edit.headers.get("x-ratelimit-remaining")).toBe("0"); // sends and edits share the bucket

    const limited = await call("POST", `/channels/${ch}/messages`, { content: "6" });
    expect(limited.status).toBe(429);
    expect(limited.body).toMatchObject({ message: "You are being rate limited.", global: false });
    expect(limited.body?.retry_after).toBeGreaterThan(0);
    expect(limited.headers.get("retry-after")).toBe(String(Math.ceil(limited.body?.retry_after)));
    expect(limited.headers.get("x-ratelimit-scope")).toBe("user");
    expect(discord.violations).toHaveLength(1);
    expect(discord.violations[0]).toMatchObject({ channelId: ch, route: "POST /channels/:id/messages" });
    // Another channel has its own bucket.
    expect((await call("POST", `/channels/${discord.ids.general}/messages`, { content: "elsewhere" })).status).toBe(
      200,
    );
  });

  test("scripted 429s and 5xx answer the next matching request only", async () => {
    discord = await startFakeDiscord();
    discord.failNext({ route: "POST /channels/:id/typing", status: 429, retryAfterMs: 1500, global: true });
    discord.failNext({ route: "POST /channels/:id/messages", status: 503 });
    const typing = await call("POST", `/channels/${discord.ids.general}/typing`);
    expect(typing.status).toBe(429);
    expect(typing.body).toEqual({ message: "You are being rate limited.", retry_after: 1.5, global: true });
    expect(typing.headers.get("x-ratelimit-global")).toBe("true");
    const down = await fetch(`${discord.apiBase}/v10/channels/${discord.ids.general}/messages`, {
      method: "POST",
      headers: { authorization: `Bot ${discord.token}`, "content-type": "application/json" },
      body: JSON.stringify({ content: "x" }),
    });
    expect(down.status).toBe(503);
    expect(down.headers.get("content-type")).toBe("text/html"); // the edge answers, not the API
    expect((await call("POST", `/channels/${discord.ids.general}/messages`, { content: "x" })).status).toBe(200);
  });

  test("an interaction is answered once, within its time", async () => {
    let clock = Date.UTC(2025, 0, 1);
    discord = await startFakeDiscord({ now: () => clock });
    const posted = await call("POST", `/channels/${discord.ids.general}/messages`, {
      content: "x",
      components: [{ type: 1, components: [{ type: 2, style: 2, label: "Stop", custom_id: "stop" }] }],
    });
    const answer = (i: { id: string; token: string }) =>
      call("POST", `/interactions/${i.id}/${i.token}/callback`, { type: 6 }, "");
    const click = () =>
      discord.clickButton({ channelId: discord.ids.general, messageId: posted.body?.id, customId: "stop" });

    const first = click();
    expect((await answer({ ...first, token: "wrong" })).body).toMatchObject({ code: 10062 });
    expect((await answer(first)).status).toBe(204);
    expect((await answer(first)).body).toMatchObject({ code: 40060 });

    const late = click();
    clock += 3001;
    expect((await answer(late)).body).toMatchObject({ code: 10062 });
    expect(discord.interactionResponses.map((r) => r.type)).toEqual([6]);
    expect(() =>
      discord.clickButton({ channelId: discord.ids.general, messageId: posted.body?.id, customId: "nope" }),
    ).toThrow(/no component/);
  });
});
