/**
 * The bots role's tool catalogue: the listing the workers publish in Redis (they hold the MCP connections),
 * refreshed in the background because the settings service reads it synchronously; built-in tools until then.
 */
import type { ToolListingStore } from "../queue/tool-listing-store.js";
import type { ToolCatalogue, ToolCatalogueGroup } from "../tools/tool-catalogue.js";

/** A catalogue that follows the workers' listing, and how to stop following it. */
export interface PublishedToolCatalogue {
  catalogue: ToolCatalogue;
  /** Reads the listing now (the timer does it every `refreshMs`). */
  refresh(): Promise<void>;
  close(): void;
}

/** Follows the listing in `store`, starting from `fallback`. */
export function createPublishedToolCatalogue(deps: {
  store: Pick<ToolListingStore, "read">;
  fallback: ToolCatalogue;
  refreshMs?: number;
  onError?: (error: unknown) => void;
}): PublishedToolCatalogue {
  let groups: ToolCatalogueGroup[] | undefined;
  const refresh = async (): Promise<void> => {
    try {
      groups = (await deps.store.read())?.groups;
    } catch (error) {
      deps.onError?.(error); // keep the last listing: Redis hiccups must not empty /tools
    }
  };
  void refresh();
  const timer = setInterval(() => void refresh(), deps.refreshMs ?? 5_000);
  timer.unref();
  return {
    catalogue: () => groups ?? deps.fallback(),
    refresh,
    close: () => clearInterval(timer),
  };
}
