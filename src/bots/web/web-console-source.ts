/** What the admin console reads: every platform's conversations, their history, and the workers' tools (plain data). */
import type { ToolGroup } from "../../contracts/tool-listing.js";

/** One conversation as the console lists it. */
export interface ConversationSummary {
  key: string;
  /** `telegram`, `discord`, `terminal`, `web`, or the key's own prefix. */
  platform: string;
  /** The first question kept, shortened. */
  title: string;
  /** Epoch ms of the last stored turn (from the history's expiry); undefined when it never expires. */
  lastActivity?: number;
  messages: number;
}

/** One stored message, read-only. */
export interface ConsoleMessage {
  role: string;
  content: string;
  name?: string;
  /** The calls an assistant message asked for: `name(arguments)`. */
  toolCalls?: string[];
}

/** The console's data source. */
export interface ConsoleSource {
  conversations(): Promise<ConversationSummary[]>;
  history(conversationKey: string): Promise<ConsoleMessage[]>;
  /** The newest tool listing of the workers (empty when no worker published one lately). */
  tools(): Promise<ToolGroup[]>;
}
