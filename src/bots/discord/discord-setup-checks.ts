/**
 * Discord set-up checks for the doctor, over REST only: the token is valid, the Message Content intent is
 * enabled (without it every message arrives with empty text), and the bot is in at least one server.
 */
import { findingsOf, type SetupFinding } from "../../contracts/setup-finding.js";
import { createDiscordRestClient, DiscordApiError, type DiscordRestClient } from "./discord-rest-client.js";

const f = findingsOf("Discord");

/** Application flags for the Message Content intent: verified bots get the first, bots in under 100 servers the _LIMITED one. */
const GATEWAY_MESSAGE_CONTENT = 1 << 18;
const GATEWAY_MESSAGE_CONTENT_LIMITED = 1 << 19;
/** View Channels, Send Messages, Send Messages in Threads, Read Message History. */
const INVITE_PERMISSIONS = (1n << 10n) | (1n << 11n) | (1n << 38n) | (1n << 16n);

/** What the Discord checks need. */
export interface DiscordCheckOptions {
  token: string;
  apiBase: string;
}

function failureText(error: unknown): string {
  return error instanceof DiscordApiError
    ? `${error.status}${error.code ? ` (${error.code})` : ""} ${error.message.split(": ").slice(1).join(": ")}`
    : (error as Error).message;
}

/** GET /users/@me with the bot token. */
async function checkToken(rest: DiscordRestClient, apiBase: string): Promise<SetupFinding> {
  try {
    const me = await rest.request<{ id: string; username: string }>("GET", "/users/@me");
    return f.pass("token", `token valid: ${me.username} (id ${me.id})`);
  } catch (error) {
    if (error instanceof DiscordApiError && error.status === 401) {
      return f.fail(
        "token",
        "DISCORD_BOT_TOKEN is rejected (401 Unauthorized)",
        "Developer Portal → your application → Bot → Reset Token, and put the new one in DISCORD_BOT_TOKEN",
      );
    }
    return f.fail(
      "token",
      `cannot reach Discord at ${apiBase} (${failureText(error)})`,
      "check the network, a proxy, or DISCORD_API_BASE",
    );
  }
}

/** The application's flags say whether the Message Content intent is switched on in the portal. */
async function checkMessageContent(
  rest: DiscordRestClient,
): Promise<{ finding: SetupFinding; applicationId?: string }> {
  const app = await rest.request<{ id: string; flags?: number }>("GET", "/applications/@me");
  const finding =
    ((app.flags ?? 0) & (GATEWAY_MESSAGE_CONTENT | GATEWAY_MESSAGE_CONTENT_LIMITED)) !== 0
      ? f.pass("message content", "the Message Content intent is enabled")
      : f.fail(
          "message content",
          "the Message Content intent is not enabled: Discord refuses the bot's login (4014), or delivers messages with empty text",
          "Developer Portal → your application → Bot → Privileged Gateway Intents → turn on Message Content Intent, and save",
        );
  return { finding, applicationId: app.id };
}

/** The bot must be in at least one server to be talked to there (DMs need a shared server too). */
async function checkGuilds(rest: DiscordRestClient, applicationId: string | undefined): Promise<SetupFinding> {
  const guilds = await rest.request<{ id: string; name: string }[]>("GET", "/users/@me/guilds?limit=200");
  if (guilds.length > 0) {
    const names = guilds
      .slice(0, 3)
      .map((g) => g.name)
      .join(", ");
    return f.pass(
      "servers",
      `in ${guilds.length} server${guilds.length === 1 ? "" : "s"} (${names}${guilds.length > 3 ? ", …" : ""})`,
    );
  }
  const invite = `https://discord.com/oauth2/authorize?client_id=${applicationId ?? "<application id>"}&scope=bot+applications.commands&permissions=${INVITE_PERMISSIONS}`;
  return f.fail("servers", "the bot is in no server yet, so nobody can talk to it", `invite it: ${invite}`);
}

/** Runs the Discord checks. */
export async function checkDiscord(opts: DiscordCheckOptions): Promise<SetupFinding[]> {
  const rest = createDiscordRestClient({ token: opts.token, apiBase: opts.apiBase, timeoutMs: 10_000 });
  const token = await checkToken(rest, opts.apiBase);
  if (token.status === "fail") return [token];
  const failed = (check: string) => (error: unknown) =>
    f.fail(check, `Discord answered ${failureText(error)}`, "run the doctor again; check DISCORD_API_BASE");
  const content = await checkMessageContent(rest).catch((error: unknown) => ({
    finding: failed("message content")(error),
    applicationId: undefined,
  }));
  const guilds = await checkGuilds(rest, content.applicationId).catch(failed("servers"));
  return [token, content.finding, guilds];
}
