/**
 * The web chat and the admin console on the operator's port (WEB_CHAT=on): sign-in, pages and a JSON API.
 * Messages are enqueued like every platform's; answers come back through the conversation's Redis Stream as SSE.
 * Security: an httpOnly SameSite=Strict session cookie plus a CSRF header on every write; wrong passwords are
 * answered slowly and throttled per address; only the admin (ADMIN_TOKEN) sees the console.
 */
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { fileURLToPath } from "node:url";
import type { Redis } from "ioredis";
import type { BotGateway } from "../../contracts/bot-gateway.js";
import type { InboundMessage } from "../../contracts/inbound-message.js";
import { isSettingsCommand, type SettingsAsker, type SettingsPort } from "../../contracts/settings-port.js";
import { createFailedLoginThrottle } from "../../observability/failed-login-throttle.js";
import { secureCookie, tokenMatches } from "../../observability/http-server.js";
import type { Logger } from "../../observability/logger.js";
import type { ConsoleSource } from "./web-console-source.js";
import type { WebEventLog } from "./web-event-log.js";
import { appShell, signInPage } from "./web-pages.js";
import type { WebSession, WebSessions } from "./web-sessions.js";
import { SESSION_SECONDS } from "./web-sessions.js";

/** The page may load only our own script and style, talk only to us, and be framed by no one. */
export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
  "font-src 'none'; object-src 'none'; media-src 'none'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

const HELP =
  "Commands: /reset clears the conversation, /stop cancels the answer being written, /compact folds older messages into a summary. " +
  "Settings: /settings, /model [name], /think on|off, /reasoning off|collapsed|full, /persona <text>|reset, /tools [on|off <tool>].";

/** A web chat user from WEB_USERS. */
export interface WebUser {
  name: string;
  password: string;
}

/** What the web chat needs. */
export interface WebChatOptions {
  gateway: BotGateway;
  settings: SettingsPort;
  /** How the conversation shows reasoning (`/reasoning`). */
  reasoningOf?(conversationKey: string): Promise<"off" | "collapsed" | "full">;
  sessions: WebSessions;
  log: WebEventLog;
  console: ConsoleSource;
  /** A fresh Redis connection for one browser's live stream (blocking reads need their own). */
  reader(): Redis;
  users: readonly WebUser[];
  /** Unset: nobody signs in as admin. */
  adminToken?: string;
  maxInputChars: number;
  logger: Logger;
  /** The built page script and style (default: `dist/web/`, beside the compiled server). */
  assetsDir?: string;
}

/** The handler the ops server calls first; false: not a web chat path (the server goes on). */
export interface WebChat {
  handle(req: IncomingMessage, res: ServerResponse): boolean;
  /** Ends every live stream (shutdown). */
  close(): void;
}

const MAX_BODY_BYTES = 64 * 1024;
/** How long a wrong password's answer is held back: guessing gets slow, not only limited. */
const FAILURE_DELAY_MS = 1000;
/** How long one blocking read waits before a keep-alive comment. */
const FOLLOW_BLOCK_MS = 15_000;
const ASSETS = { "/assets/app.js": "text/javascript; charset=utf-8", "/assets/app.css": "text/css; charset=utf-8" };

function securityHeaders(res: ServerResponse): void {
  res.setHeader("content-security-policy", CONTENT_SECURITY_POLICY);
  res.setHeader("x-content-type-options", "nosniff");
  res.setHeader("referrer-policy", "same-origin");
  res.setHeader("x-frame-options", "DENY");
  res.setHeader("cross-origin-opener-policy", "same-origin");
  res.setHeader("cross-origin-resource-policy", "same-origin");
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "cache-control": "no-store" });
  res.end(JSON.stringify(body));
}

function sendHtml(res: ServerResponse, status: number, html: string, headers: Record<string, string> = {}): void {
  res.writeHead(status, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store", ...headers });
  res.end(html);
}

function redirect(res: ServerResponse, location: string, headers: Record<string, string> = {}): void {
  res.writeHead(303, { location, "cache-control": "no-store", ...headers });
  res.end();
}

function cookieOf(req: IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k === name) return v.join("=");
  }
  return undefined;
}

/** Reads a request body up to the cap; rejects beyond it. */
function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error("body too large"));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

/** True when a page of this origin sent the request (Sec-Fetch-Site, else Origin; neither: no browser, no CSRF). */
function sameOrigin(req: IncomingMessage): boolean {
  const site = req.headers["sec-fetch-site"];
  if (typeof site === "string") return site === "same-origin" || site === "none";
  const origin = req.headers.origin;
  if (origin === undefined) return true;
  try {
    return new URL(origin).host === req.headers.host;
  } catch {
    return false;
  }
}

/** A web message id: unique, free of ':' (job ids), and what groups the answer's events. */
function newMessageId(): string {
  return `${Date.now().toString(36)}${randomBytes(6).toString("hex")}`;
}

/** The conversation of a web user (one per user). */
const webConversationKey = (name: string): string => `web:${name}`;

/** Settings asked for from the web: a private conversation whose user may change everything. */
const webAsker = (conversationKey: string, userId: string): SettingsAsker => ({
  platform: "web",
  conversationKey,
  isPrivate: true,
  userId,
  isChatAdmin: async () => true,
});

/** Builds the web chat. */
export function createWebChat(opts: WebChatOptions): WebChat {
  const throttle = createFailedLoginThrottle();
  const assetsDir = opts.assetsDir ?? fileURLToPath(new URL("../../web/", import.meta.url));
  const assets = new Map<string, Promise<Buffer>>();
  const live = new Set<() => void>();

  const asset = (path: keyof typeof ASSETS): Promise<Buffer> => {
    let file = assets.get(path);
    if (!file) {
      file = readFile(`${assetsDir.replace(/\/?$/, "/")}${path.slice("/assets/".length)}`);
      // A missing bundle is retried on the next request (a build may be on its way).
      file.catch(() => assets.delete(path));
      assets.set(path, file);
    }
    return file;
  };

  /** Checks a name and password; every path compares once, so timing does not tell a known name. */
  const signIn = (name: string, password: string): { name: string; admin: boolean } | undefined => {
    if (name === "admin") {
      return opts.adminToken && tokenMatches(password, opts.adminToken) ? { name, admin: true } : undefined;
    }
    const user = opts.users.find((u) => u.name === name);
    const ok = tokenMatches(password, user?.password ?? randomBytes(16).toString("hex"));
    return user && ok ? { name, admin: false } : undefined;
  };

  const login = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const client = req.socket.remoteAddress ?? "unknown";
    const waitSeconds = throttle.blockedFor(client);
    if (waitSeconds > 0) {
      sendHtml(res, 429, signInPage(`Too many wrong passwords: try again in ${waitSeconds} s.`), {
        "retry-after": String(waitSeconds),
      });
      return;
    }
    if (!sameOrigin(req)) {
      sendHtml(res, 403, signInPage("Sign in from this site's own page."));
      return;
    }
    let form: URLSearchParams;
    try {
      form = new URLSearchParams(await readBody(req));
    } catch {
      sendHtml(res, 413, signInPage("That request was too large."));
      return;
    }
    const who = signIn((form.get("name") ?? "").trim(), form.get("password") ?? "");
    if (!who) {
      throttle.failed(client);
      // Held back: a guesser waits for every wrong answer (the throttle then caps how many a minute).
      await new Promise((resolve) => setTimeout(resolve, FAILURE_DELAY_MS));
      opts.logger.warn({ client }, "web chat: wrong name or password");
      sendHtml(res, 401, signInPage("Wrong name or password."));
      return;
    }
    const session = await opts.sessions.create(who.name, who.admin);
    redirect(res, who.admin ? "/console" : "/", {
      "set-cookie": `sid=${session.id}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${SESSION_SECONDS}${secureCookie(req)}`,
    });
  };

  const say = (ck: string, text: string) => opts.log.append(ck, { kind: "notice", text }, { keepAlive: true });
  /** Empties a web conversation's stream and tells its pages to forget what they drew. */
  const clearStream = async (ck: string) => {
    await opts.log.clear(ck);
    await opts.log.append(ck, { kind: "reset" }, { keepAlive: true });
  };

  /** One line from the chat box: a command, or a message for the queue. */
  const chatLine = async (session: WebSession, text: string): Promise<void> => {
    const ck = webConversationKey(session.name);
    const trimmed = text.trim();
    if (trimmed === "") return;
    switch (trimmed) {
      case "/help":
      case "/start":
        await say(ck, HELP);
        return;
      case "/reset":
        await opts.gateway.reset(ck);
        await clearStream(ck);
        await say(ck, "🧹 Conversation cleared. Its settings stay (/settings reset restores the defaults).");
        return;
      case "/stop":
        if (!(await opts.gateway.stop(ck))) await say(ck, "Nothing to stop.");
        return;
      case "/compact":
        await say(ck, opts.gateway.compact ? await opts.gateway.compact(ck, { shared: false }) : HELP);
        return;
    }
    const command = /^\/([a-z]+)(?:\s+([\s\S]*))?$/i.exec(trimmed);
    const name = command?.[1]?.toLowerCase() ?? "";
    if (isSettingsCommand(name)) {
      await say(ck, (await opts.settings.run(webAsker(ck, session.name), name, command?.[2] ?? "")).text);
      return;
    }
    if (trimmed.startsWith("/")) {
      await say(ck, `Unknown command. ${HELP}`);
      return;
    }
    if (trimmed.length > opts.maxInputChars) {
      await say(ck, `That message is too long (${trimmed.length} characters; the limit is ${opts.maxInputChars}).`);
      return;
    }
    const message: InboundMessage = {
      platform: "web",
      conversationKey: ck,
      chatId: session.name,
      messageId: newMessageId(),
      chatType: "private",
      author: { id: session.name, displayName: session.name },
      text: trimmed,
      receivedAt: Date.now(),
    };
    // The question goes into the stream before the queue: its answer's events can only come after it.
    await opts.log.append(
      ck,
      { kind: "user", job: message.messageId, name: session.name, text: trimmed, at: message.receivedAt },
      { keepAlive: true },
    );
    const result = await opts.gateway.enqueue(message);
    if (result.status === "refused") await say(ck, `⚠️ ${result.reason ?? "That message was not accepted."}`);
  };

  /** The conversation's events from `after` on, then live, as Server-Sent Events, until the browser goes. */
  const events = (req: IncomingMessage, res: ServerResponse, session: WebSession): void => {
    const ck = webConversationKey(session.name);
    const lastEventId = req.headers["last-event-id"];
    let after = typeof lastEventId === "string" && /^\d+-\d+$/.test(lastEventId) ? lastEventId : "0";
    res.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-store",
      "x-accel-buffering": "no",
    });
    res.write("retry: 1000\n\n");
    const reader = opts.reader();
    let open = true;
    const stop = () => {
      if (!open) return;
      open = false;
      live.delete(stop);
      reader.disconnect();
      res.end();
    };
    live.add(stop);
    req.on("close", stop);
    const write = (batch: { id: string; event: unknown }[]) => {
      for (const { id, event } of batch) {
        res.write(`id: ${id}\ndata: ${JSON.stringify(event)}\n\n`);
        after = id;
      }
    };
    void (async () => {
      try {
        for (;;) {
          const batch = await opts.log.read(ck, after);
          write(batch);
          if (batch.length < 5000) break;
        }
        while (open) {
          const batch = await opts.log.follow(reader, ck, after, FOLLOW_BLOCK_MS);
          if (!open) break;
          if (batch.length === 0) res.write(": keep-alive\n\n");
          write(batch);
        }
      } catch (error) {
        if (open) opts.logger.warn({ err: error }, "web chat: event stream ended");
        stop();
      }
    })();
  };

  /** The console's reads, by path. */
  const consoleReads = new Map<string, (url: URL) => Promise<unknown>>([
    ["/api/admin/conversations", async () => ({ conversations: await opts.console.conversations() })],
    [
      "/api/admin/history",
      async (url) => ({ messages: await opts.console.history(url.searchParams.get("key") ?? "") }),
    ],
    ["/api/admin/tools", async () => ({ groups: await opts.console.tools() })],
  ]);

  const api = async (req: IncomingMessage, res: ServerResponse, url: URL, session: WebSession): Promise<void> => {
    const path = url.pathname;
    if (req.method === "GET" && path === "/api/me") {
      const reasoning = (await opts.reasoningOf?.(webConversationKey(session.name))) ?? "collapsed";
      sendJson(res, 200, { name: session.name, admin: session.admin, csrf: session.csrf, reasoning });
      return;
    }
    if (req.method === "GET" && path === "/api/events") {
      events(req, res, session);
      return;
    }
    if (req.method === "POST") {
      // Writes: this origin's script only (the header needs script on our page; a cross-site form cannot set it).
      if (!sameOrigin(req) || !tokenMatches(String(req.headers["x-csrf-token"] ?? ""), session.csrf)) {
        sendJson(res, 403, { error: "missing or wrong CSRF token" });
        return;
      }
      let body: Record<string, unknown>;
      try {
        body = JSON.parse((await readBody(req)) || "{}") as Record<string, unknown>;
        if (typeof body !== "object" || body === null) throw new Error("not an object");
      } catch {
        sendJson(res, 400, { error: "expected a JSON object" });
        return;
      }
      const text = typeof body.text === "string" ? body.text : "";
      const key = typeof body.key === "string" ? body.key : "";
      switch (path) {
        case "/api/send":
          await chatLine(session, text);
          sendJson(res, 200, { ok: true });
          return;
        case "/api/stop":
          sendJson(res, 200, { stopped: await opts.gateway.stop(webConversationKey(session.name)) });
          return;
        case "/api/logout":
          await opts.sessions.end(session.id);
          res.setHeader("set-cookie", `sid=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0${secureCookie(req)}`);
          sendJson(res, 200, { ok: true });
          return;
      }
      if (!session.admin) {
        sendJson(res, 403, { error: "the console is for the admin" });
        return;
      }
      if (path === "/api/admin/reset" && key) {
        await opts.gateway.reset(key);
        if (key.startsWith("web:")) await clearStream(key);
        sendJson(res, 200, { ok: true });
        return;
      }
      if (path === "/api/admin/settings" && key) {
        const command = /^\/?([a-z]+)(?:\s+([\s\S]*))?$/i.exec(text.trim());
        const name = command?.[1]?.toLowerCase() ?? "";
        if (!isSettingsCommand(name)) {
          sendJson(res, 400, {
            error: "expected a settings command: settings, model, think, reasoning, persona, tools",
          });
          return;
        }
        const answer = await opts.settings.run(webAsker(key, "admin"), name, command?.[2] ?? "");
        sendJson(res, 200, { text: answer.text });
        return;
      }
      sendJson(res, 404, { error: "not found" });
      return;
    }
    if (!session.admin) {
      sendJson(res, 403, { error: "the console is for the admin" });
      return;
    }
    const read = req.method === "GET" ? consoleReads.get(path) : undefined;
    if (read) sendJson(res, 200, await read(url));
    else sendJson(res, 404, { error: "not found" });
  };

  const route = async (req: IncomingMessage, res: ServerResponse, url: URL): Promise<void> => {
    const path = url.pathname;
    if (path in ASSETS && (req.method === "GET" || req.method === "HEAD")) {
      try {
        const body = await asset(path as keyof typeof ASSETS);
        res.writeHead(200, { "content-type": ASSETS[path as keyof typeof ASSETS], "cache-control": "no-cache" });
        res.end(body);
      } catch {
        opts.logger.error({ assetsDir }, "web chat: the page bundle is missing (npm run build makes it)");
        res.writeHead(500, { "content-type": "text/plain" });
        res.end("the page bundle is missing: run npm run build\n");
      }
      return;
    }
    if (path === "/login") {
      if (req.method === "POST") await login(req, res);
      else sendHtml(res, 200, signInPage());
      return;
    }
    const session = await opts.sessions.find(cookieOf(req, "sid"));
    if (path.startsWith("/api/")) {
      if (!session) sendJson(res, 401, { error: "sign in first" });
      else await api(req, res, url, session);
      return;
    }
    if (!session) {
      redirect(res, "/login");
      return;
    }
    if (path === "/console") {
      if (session.admin) sendHtml(res, 200, appShell("console"));
      else sendHtml(res, 403, "<!doctype html><title>403</title><p>403 Forbidden: the console is for the admin.</p>");
      return;
    }
    sendHtml(res, 200, appShell("chat"));
  };

  return {
    handle(req, res) {
      let url: URL;
      try {
        url = new URL(req.url ?? "/", "http://localhost");
      } catch {
        return false;
      }
      const path = url.pathname;
      const ours =
        path === "/" || path === "/login" || path === "/console" || path.startsWith("/api/") || path in ASSETS;
      if (!ours) return false;
      securityHeaders(res);
      route(req, res, url).catch((error: unknown) => {
        opts.logger.error({ err: error }, "web chat request failed");
        if (!res.headersSent) sendJson(res, 500, { error: "something went wrong" });
        else res.end();
      });
      return true;
    },
    close() {
      for (const stop of [...live]) stop();
    },
  };
}
