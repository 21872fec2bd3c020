/**
 * Which gateway shards this process holds: DISCORD_SHARD_COUNT (`auto` asks GET /gateway/bot) and
 * DISCORD_SHARD_IDS (default all). discord.js (@discordjs/ws) then opens one session per shard and
 * paces the identifies by `session_start_limit.max_concurrency`.
 */
import { REST, Routes, Status, type Client, type RESTGetAPIGatewayBotResult } from "discord.js";

/** The shards of this process and the bot's total, as discord.js's `shards`/`shardCount` options take them. */
export interface DiscordShardPlan {
  shards: number[];
  shardCount: number;
}

/** Resolves the plan; undefined = unsharded (one session, discord.js's default). Throws one clear line on bad ids. */
export async function discordShardPlan(opts: {
  token: string;
  apiBase: string;
  count: "auto" | number | undefined;
  ids: number[] | undefined;
}): Promise<DiscordShardPlan | undefined> {
  if (opts.count === undefined && opts.ids === undefined) return undefined;
  let shardCount: number;
  if (opts.count === undefined || opts.count === "auto") {
    const rest = new REST({ api: opts.apiBase }).setToken(opts.token);
    const info = (await rest.get(Routes.gatewayBot())) as RESTGetAPIGatewayBotResult;
    shardCount = Math.max(1, info.shards);
  } else shardCount = opts.count;
  const shards = opts.ids ?? Array.from({ length: shardCount }, (_, i) => i);
  const outside = shards.filter((id) => id >= shardCount);
  if (outside.length > 0)
    throw new Error(`DISCORD_SHARD_IDS ${outside.join(",")} not below the shard count ${shardCount}`);
  return { shards, shardCount };
}

/** Each of the client's shards and its state (`ready`, `connecting`, …), for /healthz. */
export function discordShardStates(client: Client): Record<string, string> {
  const states: Record<string, string> = {};
  for (const [id, shard] of client.ws.shards) states[String(id)] = (Status[shard.status] ?? "unknown").toLowerCase();
  return states;
}

/** Whether this process registers the application commands: only the one holding shard 0 (or unsharded). */
export function holdsShardZero(client: Client): boolean {
  const shards = client.options.shards;
  return !Array.isArray(shards) || shards.includes(0);
}

/** One /healthz check per shard (`discord-shard-<id>`): a shard that is not ready degrades the process, it resumes by itself. */
export function discordShardHealthChecks(
  client: Client,
  shardIds: readonly number[],
): { name: string; degraded: boolean; check(): Promise<void> }[] {
  return shardIds.map((id) => ({
    name: `discord-shard-${id}`,
    degraded: true,
    async check() {
      const state = discordShardStates(client)[String(id)] ?? "idle";
      if (state !== "ready") throw new Error(`shard ${id} ${state}`);
    },
  }));
}
