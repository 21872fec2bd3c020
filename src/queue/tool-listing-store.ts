/**
 * The tool listing in Redis: each worker publishes its tools with a short expiry and `/tools` (adapters' process)
 * reads it. Every worker of a deployment runs the same configuration, so the last write is as good as any.
 */
import type { Redis } from "ioredis";
import type { ToolListing } from "../contracts/tool-listing.js";
import { queueKeys } from "../redis/keys.js";

/** Read and write the listing of one deployment. */
export interface ToolListingStore {
  publish(listing: ToolListing, ttlSeconds: number): Promise<void>;
  /** The newest listing, or undefined when none was published within its expiry (no worker running). */
  read(): Promise<ToolListing | undefined>;
}

/** Creates the store under KEY_PREFIX. */
export function createToolListingStore(deps: { redis: Redis; prefix: string }): ToolListingStore {
  const key = queueKeys(deps.prefix).toolListing();
  return {
    async publish(listing, ttlSeconds) {
      await deps.redis.set(key, JSON.stringify(listing), "EX", ttlSeconds);
    },
    async read() {
      const raw = await deps.redis.get(key);
      if (raw === null) return undefined;
      try {
        const parsed = JSON.parse(raw) as ToolListing;
        return Array.isArray(parsed.groups) ? parsed : undefined;
      } catch {
        return undefined; // written by a different version: as good as absent until the next refresh
      }
    },
  };
}
