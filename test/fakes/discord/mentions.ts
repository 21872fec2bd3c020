/**
 * Mentions the way Discord resolves them: what a message's text mentions (known users, roles of
 * the guild, @everyone/@here), and what its allowed_mentions lets through to an actual ping.
 */
import type { APIGuildMember, APIUser } from "discord.js";
import { formError, type HttpAnswer } from "./http-answer.js";
import type { DiscordState } from "./state.js";

/** Who a message mentions (or, after allowed_mentions, pings). */
export interface Mentions {
  users: string[];
  roles: string[];
  everyone: boolean;
}
/** The users and roles of the fake that a text mentions; roles and @everyone only count in a guild. */
export const parseMentions = ({ users, roles }: DiscordState, content: string, inGuild: boolean): Mentions => ({
  users: [...new Set([...content.matchAll(/<@!?(\d{15,21})>/g)].map((m) => m[1] ?? ""))].filter((u) => users.has(u)),
  roles: inGuild
    ? [...new Set([...content.matchAll(/<@&(\d{15,21})>/g)].map((m) => m[1] ?? ""))].filter((r) => roles.has(r))
    : [],
  everyone: inGuild && /@(everyone|here)\b/.test(content),
});
/** A mentioned user as the gateway carries it: with their guild member (minus its user) in a guild. */
export const userWithMember = (
  { users, members }: DiscordState,
  userId: string,
  inGuild: boolean,
): APIUser & { member?: Omit<APIGuildMember, "user"> } => {
  const u = users.get(userId)!;
  const m = inGuild ? members.get(userId) : undefined;
  if (!m) return u;
  const { user: _user, ...rest } = m;
  return { ...u, member: rest };
};

type AllowedMentions = { parse?: unknown; users?: unknown; roles?: unknown; replied_user?: unknown };
/** A 400 for an allowed_mentions Discord would refuse, or undefined. */
export const validateAllowedMentions = (am: unknown): HttpAnswer | undefined => {
  if (am === undefined || am === null) return undefined;
  if (typeof am !== "object")
    return formError("allowed_mentions", "MODEL_TYPE_CONVERT", "Only dictionaries may be used in a ModelType");
  const { parse, users: u, roles: r } = am as AllowedMentions;
  if (
    parse !== undefined &&
    (!Array.isArray(parse) || parse.some((p) => !["users", "roles", "everyone"].includes(p as string)))
  ) {
    return formError(
      "allowed_mentions.parse",
      "BASE_TYPE_CHOICES",
      "Value must be one of {'users', 'roles', 'everyone'}.",
    );
  }
  const parsed = (parse ?? []) as string[];
  if (parsed.includes("users") && Array.isArray(u) && u.length > 0) {
    return formError(
      "allowed_mentions",
      "MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE",
      'parse:["users"] and users: [ids...] are mutually exclusive.',
    );
  }
  if (parsed.includes("roles") && Array.isArray(r) && r.length > 0) {
    return formError(
      "allowed_mentions",
      "MESSAGE_ALLOWED_MENTIONS_PARSE_EXCLUSIVE",
      'parse:["roles"] and roles: [ids...] are mutually exclusive.',
    );
  }
  if ((Array.isArray(u) && u.length > 100) || (Array.isArray(r) && r.length > 100)) {
    return formError("allowed_mentions", "BASE_TYPE_MAX_LENGTH", "Must be 100 or fewer in length.");
  }
  return undefined;
};
/** Without allowed_mentions Discord parses everything (and pings the replied-to author). */
export const applyAllowed = (found: Mentions, am: unknown, repliedAuthor: string | undefined): Mentions => {
  if (am === undefined || am === null) {
    return { ...found, users: [...new Set([...found.users, ...(repliedAuthor ? [repliedAuthor] : [])])] };
  }
  const { parse, users: u, roles: r, replied_user } = am as AllowedMentions;
  const parsed = Array.isArray(parse) ? (parse as string[]) : [];
  const allowedUsers = parsed.includes("users")
    ? found.users
    : found.users.filter((id) => Array.isArray(u) && u.includes(id));
  const allowedRoles = parsed.includes("roles")
    ? found.roles
    : found.roles.filter((id) => Array.isArray(r) && r.includes(id));
  const replied = replied_user === true && repliedAuthor ? [repliedAuthor] : [];
  return {
    users: [...new Set([...allowedUsers, ...replied])],
    roles: allowedRoles,
    everyone: found.everyone && parsed.includes("everyone"),
  };
};
