/**
 * Slash commands and interactions: registering the bot's commands (PUT replaces them all, as
 * Discord's bulk overwrite does), listing them, and answering an interaction through its callback
 * (once, within the token's lifetime, with a response type the interaction allows), then editing
 * that response through the interaction's webhook (a deferred reply's final text), for 15 minutes.
 */
import { MessageFlags, type APIApplicationCommand, type APIMessage } from "discord.js";
import { apiError, formError, json, noContent } from "./http-answer.js";
import type { MessageWriter } from "./message-writer.js";
import { contentProblem } from "./message-validation.js";
import type { Route } from "./rest-route.js";
import type { DiscordState } from "./state.js";

/** How long an interaction's token may edit its response (Discord: 15 minutes). */
const INTERACTION_TOKEN_LIFETIME_MS = 15 * 60_000;

/** PUT/GET /applications/:id/commands, POST /interactions/:id/:token/callback and PATCH …/messages/@original. */
export function interactionCommandRoutes(
  state: DiscordState,
  { createBotMessage, editBotMessage }: MessageWriter,
): Route[] {
  const {
    world,
    commands,
    nextId,
    changed,
    interactions,
    now,
    interactionTimeoutMs,
    interactionResponses,
    interactionEdits,
  } = state;
  return [
    {
      method: "PUT",
      pattern: /^\/applications\/(\d+)\/commands$/,
      route: "PUT /applications/:id/commands",
      auth: true,
      handle: ({ params, json: list }) => {
        if (params[0] !== world.applicationId) return apiError(403, 50001, "Missing Access");
        if (!Array.isArray(list))
          return formError("_errors", "MODEL_TYPE_CONVERT", "Only iterables may be used in a ListType");
        const made: APIApplicationCommand[] = [];
        for (const [i, raw] of list.entries()) {
          const c = raw as { name?: unknown; description?: unknown; type?: unknown };
          const chatInput = (c.type ?? 1) === 1;
          // Slash commands: lower-case, no spaces; user and message commands: any 1-32 characters.
          const validName = chatInput ? /^[-_\p{Ll}\p{Lo}\p{N}]{1,32}$/u : /^.{1,32}$/u;
          if (typeof c.name !== "string" || !validName.test(c.name) || c.name.trim() !== c.name) {
            return formError(`${i}.name`, "APPLICATION_COMMAND_INVALID_NAME", "Command name is invalid");
          }
          if (!chatInput && typeof c.description === "string" && c.description !== "") {
            return formError(
              `${i}.description`,
              "APPLICATION_COMMAND_CONTEXT_MENU_DESCRIPTION",
              "Context menu commands cannot have description",
            );
          }
          if (
            (c.type ?? 1) === 1 &&
            (typeof c.description !== "string" || c.description.length < 1 || c.description.length > 100)
          ) {
            return formError(`${i}.description`, "BASE_TYPE_BAD_LENGTH", "Must be between 1 and 100 in length.");
          }
          const previous = commands.find((x) => x.name === c.name);
          made.push({
            ...(raw as object),
            id: previous?.id ?? nextId(),
            application_id: world.applicationId,
            version: nextId(),
            type: (c.type as number | undefined) ?? 1,
            name: c.name,
            description: typeof c.description === "string" ? c.description : "",
            default_member_permissions: null,
            nsfw: false,
          } as APIApplicationCommand);
        }
        commands.splice(0, commands.length, ...made);
        changed();
        return json(200, made);
      },
    },
    {
      method: "GET",
      pattern: /^\/applications\/(\d+)\/commands$/,
      route: "GET /applications/:id/commands",
      auth: true,
      handle: () => json(200, commands),
    },
    {
      method: "POST",
      pattern: /^\/interactions\/(\d+)\/([^/]+)\/callback$/,
      route: "POST /interactions/:id/:token/callback",
      auth: false,
      handle: ({ params, body, query }) => {
        const interaction = interactions.get(params[0]!);
        if (!interaction || interaction.token !== params[1] || now() - interaction.createdAt > interactionTimeoutMs) {
          return apiError(404, 10062, "Unknown interaction");
        }
        if (interaction.acknowledged) return apiError(400, 40060, "Interaction has already been acknowledged.");
        const type = Number(body?.type);
        const data = body?.data as Record<string, unknown> | undefined;
        if (![1, 4, 5, 6, 7, 8, 9].includes(type))
          return formError("type", "BASE_TYPE_CHOICES", "Value must be one of (1, 4, 5, 6, 7, 8, 9).");
        // An autocomplete interaction takes only choices (8), and choices answer nothing else.
        if ((type === 8) !== (interaction.autocomplete === true))
          return apiError(400, 40004, "Interaction response type invalid for this interaction");
        if (type === 8) {
          const choices = (data as { choices?: unknown } | undefined)?.choices;
          if (!Array.isArray(choices) || choices.length > 25)
            return formError("data.choices", "BASE_TYPE_MAX_LENGTH", "Must be 25 or fewer in length.");
        }
        if ((type === 6 || type === 7) && !interaction.messageId)
          return apiError(400, 40004, "Interaction response type invalid for this interaction");
        const ephemeral = ((Number(data?.flags) || 0) & MessageFlags.Ephemeral) !== 0;
        if (type === 4 || type === 7) {
          const problem = contentProblem(data ?? {}, type === 4);
          if (problem) return problem;
        }
        interaction.acknowledged = true;
        interaction.responseType = type;
        interaction.ephemeral = ephemeral;
        interactionResponses.push({ at: now(), interactionId: params[0]!, type, data, ephemeral });
        let message: APIMessage | undefined;
        if (type === 4 && !ephemeral) {
          const answer = createBotMessage(interaction.channelId, data ?? {}, { application_id: world.applicationId });
          message = answer.body as APIMessage;
        } else if (type === 7 && interaction.messageId) {
          message = editBotMessage(interaction.channelId, interaction.messageId, data ?? {}).body as APIMessage;
        }
        changed();
        if (query.get("with_response") !== "true") return noContent();
        return json(200, {
          interaction: { id: params[0], type, response_message_id: message?.id, response_message_ephemeral: ephemeral },
          resource: { type, ...(message ? { message } : {}) },
        });
      },
    },
    {
      method: "PATCH",
      pattern: /^\/webhooks\/(\d+)\/([^/]+)\/messages\/(?:@|%40)original$/,
      route: "PATCH /webhooks/:id/:token/messages/@original",
      auth: false,
      handle: ({ params, body }) => {
        const found = [...interactions.entries()].find(([, i]) => i.token === params[1]);
        // The token works for 15 minutes, and only once the interaction was answered (or deferred).
        if (params[0] !== world.applicationId || !found || now() - found[1].createdAt > INTERACTION_TOKEN_LIFETIME_MS)
          return apiError(404, 10015, "Unknown Webhook");
        const [interactionId, interaction] = found;
        if (!interaction.acknowledged || interaction.responseType === 8) return apiError(404, 10008, "Unknown Message");
        const problem = contentProblem(body ?? {}, false);
        if (problem) return problem;
        interactionEdits.push({ at: now(), interactionId, data: body, ephemeral: interaction.ephemeral === true });
        changed();
        return json(200, {
          id: interactionId,
          channel_id: interaction.channelId,
          content: typeof body?.content === "string" ? body.content : "",
          flags: interaction.ephemeral ? MessageFlags.Ephemeral : 0,
        });
      },
    },
  ];
}
