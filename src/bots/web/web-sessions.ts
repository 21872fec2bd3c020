/**
 * Web chat sign-in sessions in Redis (any bots process can serve any browser): a random id in an httpOnly cookie
 * names who signed in, whether they are the admin, and the CSRF token every write must echo.
 */
import { randomBytes } from "node:crypto";
import type { Redis } from "ioredis";
import { webKeys } from "../../redis/keys.js";

/** Who a session belongs to. */
export interface WebSession {
  id: string;
  name: string;
  admin: boolean;
  /** Sent back by the page in `x-csrf-token` on every write. */
  csrf: string;
}

/** Create, find and end sessions. */
export interface WebSessions {
  create(name: string, admin: boolean): Promise<WebSession>;
  /** The session named by the cookie's id, or undefined (unknown, expired or malformed). */
  find(id: string | undefined): Promise<WebSession | undefined>;
  end(id: string): Promise<void>;
}

/** How long a sign-in lasts (12 hours). */
export const SESSION_SECONDS = 12 * 60 * 60;

const ID_SHAPE = /^[A-Za-z0-9_-]{43}$/;

/** Creates the session store under KEY_PREFIX. */
export function createWebSessions(deps: { redis: Redis; prefix: string }): WebSessions {
  const keys = webKeys(deps.prefix);
  return {
    async create(name, admin) {
      const session = {
        id: randomBytes(32).toString("base64url"),
        name,
        admin,
        csrf: randomBytes(24).toString("base64url"),
      };
      await deps.redis.set(keys.session(session.id), JSON.stringify(session), "EX", SESSION_SECONDS);
      return session;
    },
    async find(id) {
      if (!id || !ID_SHAPE.test(id)) return undefined;
      const raw = await deps.redis.get(keys.session(id));
      if (raw === null) return undefined;
      try {
        const value = JSON.parse(raw) as WebSession;
        return value.id === id ? value : undefined;
      } catch {
        return undefined;
      }
    },
    async end(id) {
      if (ID_SHAPE.test(id)) await deps.redis.del(keys.session(id));
    },
  };
}
