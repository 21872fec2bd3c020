/**
 * Whether a user administers a chat (getChatMember), cached for a minute: five presses ask Telegram once,
 * a demoted admin loses the right within a minute. A failed lookup is "no", and not cached.
 */
import type { Api } from "grammy";

/** Answers "is this user an admin of this chat?". */
export type ChatAdminCheck = (chatId: number, userId: number) => Promise<boolean>;

/** Options of the cached check. */
export interface ChatAdminCheckOptions {
  api: Pick<Api, "getChatMember">;
  /** How long an answer is trusted (default 60 s). */
  ttlMs?: number;
  now?: () => number;
  logger?: { warn(obj: object, msg?: string): void };
}

/** Creates the cached getChatMember check. */
export function createChatAdminCheck(opts: ChatAdminCheckOptions): ChatAdminCheck {
  const ttlMs = opts.ttlMs ?? 60_000;
  const now = opts.now ?? Date.now;
  const cache = new Map<string, { admin: boolean; until: number }>();
  return async (chatId, userId) => {
    const key = `${chatId}:${userId}`;
    const hit = cache.get(key);
    if (hit && hit.until > now()) return hit.admin;
    let admin: boolean;
    try {
      const member = await opts.api.getChatMember(chatId, userId);
      admin = member.status === "creator" || member.status === "administrator";
    } catch (err) {
      opts.logger?.warn(
        { chatId, err: err instanceof Error ? err.message : String(err) },
        "getChatMember failed; treating the user as not an admin",
      );
      return false;
    }
    cache.delete(key);
    cache.set(key, { admin, until: now() + ttlMs });
    // At most 1000 answers kept, the oldest go first.
    if (cache.size > 1000) cache.delete(cache.keys().next().value as string);
    return admin;
  };
}
