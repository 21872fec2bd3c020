/**
 * Who may change a conversation's settings: in a private chat the user; elsewhere
 * (groups, forum topics, guild channels) the chat's admins, as the platform says, and
 * the bot-wide admins of ADMIN_USER_IDS. Everyone may look.
 */
import type { SettingsAsker } from "../contracts/settings-port.js";

const PLATFORM_TAG = { telegram: "tg", discord: "dc", terminal: "term", web: "web" } as const;

/** The ADMIN_USER_IDS form of an asker: `tg:<id>` / `dc:<id>`. */
export function adminIdOf(asker: Pick<SettingsAsker, "platform" | "userId">): string {
  return `${PLATFORM_TAG[asker.platform]}:${asker.userId}`.toLowerCase();
}

/** Decides whether the asker may change this conversation's settings (asks the platform only when needed). */
export async function mayChangeSettings(asker: SettingsAsker, botAdmins: readonly string[]): Promise<boolean> {
  if (asker.isPrivate) return true;
  if (botAdmins.includes(adminIdOf(asker))) return true;
  return asker.isChatAdmin();
}
