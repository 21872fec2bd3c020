/**
 * "Ask <bot>": a message command (a message's Apps menu) that asks the bot about that message, its
 * text, files and author. The answer is a reply to the message (or goes into its thread when threads
 * are on); the person who asked gets a short note only they see, since Discord wants every
 * interaction answered within 3 s and the answer itself takes longer.
 */
import {
  ApplicationCommandType,
  ApplicationIntegrationType,
  InteractionContextType,
  type MessageApplicationCommandData,
} from "discord.js";

/** Discord's limit on a command's name. */
const COMMAND_NAME_MAX = 32;

/** The command's definition, named after the bot ("Ask TestBot"), registered with the others. */
export function askCommandFor(botName: string): MessageApplicationCommandData {
  const name = [...`Ask ${botName.replace(/\s+/g, " ").trim()}`].slice(0, COMMAND_NAME_MAX).join("").trimEnd();
  return {
    type: ApplicationCommandType.Message,
    name,
    contexts: [InteractionContextType.Guild, InteractionContextType.BotDM],
    integrationTypes: [ApplicationIntegrationType.GuildInstall],
  };
}

/**
 * The question the model gets for a message someone asked about: who wrote it and what it says
 * (its files travel as attachments). The asker's name is added by the shared-conversation transcript.
 */
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
