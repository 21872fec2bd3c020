/**
 * The fake's WebSocket gateway, speaking gateway v10 with JSON encoding the way Discord does:
 * HELLO → IDENTIFY (token, shard and intents checked; privileged intents must be enabled)
 * → READY (guilds unavailable) → GUILD_CREATE per guild; heartbeats are ACKed; dispatches
 * carry per-session sequence numbers and are buffered, so RESUME replays what was missed and
 * ends with RESUMED. Protocol mistakes close the socket with Discord's close codes.
 */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { randomBytes } from "node:crypto";
import {
  GatewayIntentBits,
  GatewayOpcodes,
  type GatewayGuildCreateDispatchData,
  type GatewayReadyDispatchData,
} from "discord.js";
import { WebSocketServer, type WebSocket } from "ws";
import type { PrivilegedIntent } from "../discord-fixtures.js";

/** One dispatch as a session saw it. */
export interface DispatchRecord {
  s: number;
  t: string;
  d: unknown;
}

/** A gateway session (survives reconnects until invalidated, like Discord's). */
export interface FakeGatewaySession {
  readonly id: string;
  readonly intents: number;
  seq: number;
  /** Dispatches sent (or buffered while disconnected), oldest first; the last 1000. */
  readonly events: DispatchRecord[];
  /** Connected and past READY/RESUMED. */
  live: boolean;
  invalidated: boolean;
  resumes: number;
  /** [shard_id, num_shards] as identified; [0, 1] unsharded. */
  readonly shard: [number, number];
}

/** What the gateway needs from the rest of the fake. */
export interface FakeGatewayOptions {
  token: string;
  privilegedIntents: ReadonlySet<PrivilegedIntent>;
  heartbeatIntervalMs: number;
  /** READY's data for a new session. */
  ready(sessionId: string, shard: [number, number]): GatewayReadyDispatchData;
  /** Full guild objects sent after READY. */
  guildCreates(): GatewayGuildCreateDispatchData[];
  /** Called whenever something observable changed (waitFor listens). */
  onChange(): void;
  /** Guilds one session may hold before Discord demands sharding (close 4011); Discord's is 2,500. */
  maxGuildsPerSession?: number;
  /** session_start_limit.max_concurrency: identifies allowed per 5 s per rate-limit key (shard_id % it). */
  maxConcurrency?: number;
}

/** Counts of what clients did, for assertions. */
export interface GatewayStats {
  connections: number;
  identifies: number;
  resumes: number;
  heartbeats: number;
  /** Close codes the fake sent, in order. */
  closesSent: number[];
  /** Connection paths: the first connect uses `/`, a resume uses the resume_gateway_url path. */
  paths: string[];
  /** Identifies refused for coming faster than max_concurrency per 5 s (answered with op 9). */
  identifyPaceViolations: number;
}

/** The gateway half of the fake. */
export interface FakeGateway {
  handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void;
  /** Sends an event to every session; `build` may return undefined to skip a session (intents). */
  dispatch(t: string, build: (session: FakeGatewaySession) => unknown): void;
  readonly sessions: readonly FakeGatewaySession[];
  readonly stats: GatewayStats;
  /** Closes every open connection with `code` (4000 = resumable, 1000 = the client must identify again). */
  disconnectAll(code?: number, reason?: string): void;
  /** Sends op 7 RECONNECT: the client should reconnect and RESUME. */
  requestReconnect(): void;
  /** Sends op 1: the client must heartbeat immediately. */
  requestHeartbeat(): void;
  close(): Promise<void>;
}

const INTENT_BITS = Object.values(GatewayIntentBits).filter((v): v is number => typeof v === "number");
const ALL_INTENTS = INTENT_BITS.reduce((mask, bit) => mask | bit, 0);
const PRIVILEGED: Record<PrivilegedIntent, number> = {
  GuildMembers: GatewayIntentBits.GuildMembers,
  GuildPresences: GatewayIntentBits.GuildPresences,
  MessageContent: GatewayIntentBits.MessageContent,
};

const IDENTIFY_WINDOW_MS = 5000;

/** Discord's shard formula: `(guild_id >> 22) % num_shards`. */
export const shardOf = (guildId: string, shardCount: number): number =>
  Number((BigInt(guildId) >> 22n) % BigInt(shardCount));

interface Connection {
  ws: WebSocket;
  session?: FakeGatewaySession;
  sentInWindow: number;
  windowStart: number;
}

/** Creates the gateway; attach it to an HTTP server's `upgrade` event. */
export function createFakeGateway(options: FakeGatewayOptions): FakeGateway {
  const wss = new WebSocketServer({ noServer: true });
  const sessions: FakeGatewaySession[] = [];
  const connections = new Set<Connection>();
  const stats: GatewayStats = {
    connections: 0,
    identifies: 0,
    resumes: 0,
    heartbeats: 0,
    closesSent: [],
    paths: [],
    identifyPaceViolations: 0,
  };
  const maxConcurrency = options.maxConcurrency ?? 1;
  // Per rate-limit key (shard_id % max_concurrency): when its last identify was accepted.
  const lastIdentify = new Map<number, number>();

  const send = (conn: Connection, payload: { op: number; d: unknown; s?: number | null; t?: string | null }): void => {
    if (conn.ws.readyState !== conn.ws.OPEN) return;
    conn.ws.send(JSON.stringify({ s: null, t: null, ...payload }));
  };

  const closeWith = (conn: Connection, code: number, reason: string): void => {
    stats.closesSent.push(code);
    conn.ws.close(code, reason);
  };

  const sendDispatch = (conn: Connection | undefined, session: FakeGatewaySession, t: string, d: unknown): void => {
    session.seq += 1;
    const record = { s: session.seq, t, d };
    session.events.push(record);
    if (session.events.length > 1000) session.events.shift();
    if (conn) send(conn, { op: GatewayOpcodes.Dispatch, ...record });
  };

  const connectionOf = (session: FakeGatewaySession): Connection | undefined =>
    [...connections].find((c) => c.session === session && c.ws.readyState === c.ws.OPEN);

  const identify = (conn: Connection, d: Record<string, unknown>): void => {
    if (conn.session) return closeWith(conn, 4005, "Already authenticated.");
    const token = typeof d.token === "string" ? d.token.replace(/^Bot\s+/i, "") : "";
    if (token !== options.token) return closeWith(conn, 4004, "Authentication failed.");
    const shard = (d.shard ?? [0, 1]) as unknown;
    if (
      !Array.isArray(shard) ||
      shard.length !== 2 ||
      !shard.every((n) => Number.isInteger(n)) ||
      shard[1] < 1 ||
      shard[0] < 0 ||
      shard[0] >= shard[1]
    ) {
      return closeWith(conn, 4010, "Invalid shard.");
    }
    const [shardId, shardCount] = shard as [number, number];
    const intents = d.intents;
    if (typeof intents !== "number" || !Number.isInteger(intents) || intents < 0 || (intents & ~ALL_INTENTS) !== 0) {
      return closeWith(conn, 4013, "Invalid intent(s).");
    }
    for (const [name, bit] of Object.entries(PRIVILEGED) as [PrivilegedIntent, number][]) {
      if ((intents & bit) !== 0 && !options.privilegedIntents.has(name))
        return closeWith(conn, 4014, "Disallowed intent(s).");
    }
    const held = options.guildCreates().filter((g) => shardOf(g.id, shardCount) === shardId).length;
    if (held > (options.maxGuildsPerSession ?? 2500)) return closeWith(conn, 4011, "Sharding required.");
    // Discord lets max_concurrency sessions identify per 5 s (one bucket per shard_id % max_concurrency);
    // a faster identify gets op 9 (not resumable) and must wait before trying again.
    const key = shardId % maxConcurrency;
    const now = Date.now();
    const last = lastIdentify.get(key);
    if (last !== undefined && now - last < IDENTIFY_WINDOW_MS) {
      stats.identifyPaceViolations += 1;
      send(conn, { op: GatewayOpcodes.InvalidSession, d: false });
      options.onChange();
      return;
    }
    lastIdentify.set(key, now);
    stats.identifies += 1;
    const session: FakeGatewaySession = {
      shard: [shardId, shardCount],
      id: randomBytes(16).toString("hex"),
      intents,
      seq: 0,
      events: [],
      live: true,
      invalidated: false,
      resumes: 0,
    };
    sessions.push(session);
    conn.session = session;
    const ready = options.ready(session.id, [shardId, shardCount]);
    // Each session learns only the guilds of its shard.
    const readyGuilds = ready.guilds.filter((g) => shardOf(g.id, shardCount) === shardId);
    sendDispatch(conn, session, "READY", { ...ready, guilds: readyGuilds });
    for (const guild of options.guildCreates()) {
      if (shardOf(guild.id, shardCount) === shardId) sendDispatch(conn, session, "GUILD_CREATE", guild);
    }
    options.onChange();
  };

  const resume = (conn: Connection, d: Record<string, unknown>): void => {
    if (conn.session) return closeWith(conn, 4005, "Already authenticated.");
    const token = typeof d.token === "string" ? d.token.replace(/^Bot\s+/i, "") : "";
    if (token !== options.token) return closeWith(conn, 4004, "Authentication failed.");
    const session = sessions.find((s) => s.id === d.session_id && !s.invalidated);
    const seq = typeof d.seq === "number" ? d.seq : -1;
    if (!session || seq > session.seq) {
      // Discord answers an unknown or expired session with op 9, d=false: identify afresh.
      send(conn, { op: GatewayOpcodes.InvalidSession, d: false });
      return;
    }
    const previous = connectionOf(session);
    if (previous && previous !== conn) closeWith(previous, 4000, "Session resumed elsewhere.");
    stats.resumes += 1;
    session.resumes += 1;
    conn.session = session;
    session.live = true;
    for (const event of session.events.filter((e) => e.s > seq)) send(conn, { op: GatewayOpcodes.Dispatch, ...event });
    sendDispatch(conn, session, "RESUMED", {});
    options.onChange();
  };

  const onMessage = (conn: Connection, raw: string): void => {
    const now = Date.now();
    if (now - conn.windowStart >= 60_000) {
      conn.windowStart = now;
      conn.sentInWindow = 0;
    }
    conn.sentInWindow += 1;
    if (conn.sentInWindow > 120) return closeWith(conn, 4008, "Rate limited.");
    let payload: { op?: unknown; d?: unknown };
    try {
      payload = JSON.parse(raw) as { op?: unknown; d?: unknown };
    } catch {
      return closeWith(conn, 4002, "Error while decoding payload.");
    }
    const d = (payload.d && typeof payload.d === "object" ? payload.d : {}) as Record<string, unknown>;
    switch (payload.op) {
      case GatewayOpcodes.Heartbeat:
        stats.heartbeats += 1;
        send(conn, { op: GatewayOpcodes.HeartbeatAck, d: null });
        options.onChange();
        return;
      case GatewayOpcodes.Identify:
        return identify(conn, d);
      case GatewayOpcodes.Resume:
        return resume(conn, d);
      case GatewayOpcodes.PresenceUpdate:
      case GatewayOpcodes.VoiceStateUpdate:
      case GatewayOpcodes.RequestGuildMembers:
      case GatewayOpcodes.RequestSoundboardSounds:
        if (!conn.session) return closeWith(conn, 4003, "Not authenticated.");
        return;
      default:
        return closeWith(conn, 4001, "Unknown opcode.");
    }
  };

  wss.on("connection", (ws: WebSocket, req: IncomingMessage) => {
    const url = new URL(req.url ?? "/", "ws://fake");
    const conn: Connection = { ws, sentInWindow: 0, windowStart: Date.now() };
    connections.add(conn);
    stats.connections += 1;
    stats.paths.push(url.pathname);
    ws.on("message", (data, isBinary) => {
      if (isBinary) return closeWith(conn, 4002, "Error while decoding payload.");
      onMessage(conn, data.toString());
    });
    ws.on("close", (code) => {
      connections.delete(conn);
      if (conn.session) {
        conn.session.live = false;
        // A client closing with 1000/1001 ends its session; other codes keep it resumable.
        if (code === 1000 || code === 1001) conn.session.invalidated = true;
      }
      options.onChange();
    });
    ws.on("error", () => undefined);
    const version = url.searchParams.get("v");
    if (version !== "10" && version !== "9") return closeWith(conn, 4012, "Invalid API version.");
    if ((url.searchParams.get("encoding") ?? "json") !== "json")
      return closeWith(conn, 4002, "Error while decoding payload.");
    if (url.searchParams.has("compress")) return closeWith(conn, 4002, "Error while decoding payload.");
    send(conn, { op: GatewayOpcodes.Hello, d: { heartbeat_interval: options.heartbeatIntervalMs } });
    options.onChange();
  });

  return {
    handleUpgrade(req, socket, head) {
      wss.handleUpgrade(req, socket, head, (ws) => wss.emit("connection", ws, req));
    },
    dispatch(t, build) {
      for (const session of sessions) {
        if (session.invalidated) continue;
        const d = build(session);
        if (d === undefined) continue;
        // A guild's events go to its shard only; DMs (no guild_id) to shard 0.
        const guildId = (d as { guild_id?: unknown }).guild_id;
        const target = typeof guildId === "string" ? shardOf(guildId, session.shard[1]) : 0;
        if (target !== session.shard[0]) continue;
        sendDispatch(session.live ? connectionOf(session) : undefined, session, t, d);
      }
      options.onChange();
    },
    sessions,
    stats,
    disconnectAll(code = 4000, reason = "Reconnect requested.") {
      for (const conn of connections) closeWith(conn, code, reason);
    },
    requestReconnect() {
      for (const conn of connections) send(conn, { op: GatewayOpcodes.Reconnect, d: null });
    },
    requestHeartbeat() {
      for (const conn of connections) send(conn, { op: GatewayOpcodes.Heartbeat, d: null });
    },
    async close() {
      for (const conn of connections) conn.ws.terminate();
      connections.clear();
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}
