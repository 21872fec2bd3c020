/**
 * "Ask <bot>": a message command (a message's Apps menu) that asks the bot about that message. The answer is a
 * reply to it; the asker gets a note only they see, since Discord wants every interaction answered within 3 s.
 */
import { ApplicationCommandType, type MessageApplicationCommandData } from "discord.js";
import { inGuildsAndDms } from "./discord-commands.js";

/** The command's definition, named after the bot ("Ask TestBot"), registered with the others. */
export function askCommandFor(botName: string): MessageApplicationCommandData {
  // Discord allows 32 characters in a command's name.
  const name = [...`Ask ${botName.replace(/\s+/g, " ").trim()}`].slice(0, 32).join("").trimEnd();
  return inGuildsAndDms({ type: ApplicationCommandType.Message, name });
}

/** The question the model gets about a message: who wrote it and what it says (its files travel as attachments). */
export function askQuestionText(authorName: string, text: string, files: number): string {
  const what = files === 0 ? "this message" : files === 1 ? "this message and its file" : "this message and its files";
  const intro = `Please look at ${what} from ${authorName} and answer it, or explain it if it asks nothing.`;
  return text === "" ? intro : `${intro}\n\n${text}`;
}

/** The note only the asker sees, by what became of the question. */
export const ASK_NOTES = {
  queued: "On it: my answer will be a reply to that message.",
  inThread: (threadId: string) => `On it: my answer is in the thread <#${threadId}>.`,
  duplicate: "I am answering that message already (or have answered it).",
  empty: "That message has no text or files I can read.",
  refused: "I can't take that question right now.",
} as const;
