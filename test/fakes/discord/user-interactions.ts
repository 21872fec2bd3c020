/**
 * Interactions a user starts in the fake: pressing a button on a message, running a registered
 * slash command, picking a message command from a message's Apps menu, typing into an autocomplete option. Each is refused the way the client would
 * refuse it (no such button, command or option), then dispatched as INTERACTION_CREATE with a
 * token the bot must answer within the interaction timeout.
 */
import { randomBytes } from "node:crypto";
import {
  ApplicationCommandOptionType,
  ApplicationCommandType,
  ComponentType,
  InteractionType,
  PermissionFlagsBits,
  PermissionsBitField,
  type APIUser,
} from "discord.js";
import type { FakeDiscord } from "../discord-server.js";
import type { FakeGateway } from "./gateway.js";
import { guildOf, type DiscordState } from "./state.js";

/** The test's way to start interactions (see FakeDiscord for each). */
export function createUserInteractions(
  state: DiscordState,
  gateway: FakeGateway,
): Pick<FakeDiscord, "clickButton" | "runCommand" | "runMessageCommand" | "autocomplete"> {
  const { world, roles, channels, members, nextId, findMessage, interactions, commands, now } = state;
  /** A member's permissions in a channel, as interactions carry them: @everyone's and their roles' (no overwrites in this world); Administrator means all. */
  const memberPermissions = (roleIds: readonly string[]): string => {
    let bits = BigInt(world.roles.everyone.permissions);
    for (const roleId of roleIds) bits |= BigInt(roles.get(roleId)?.permissions ?? "0");
    return String((bits & PermissionFlagsBits.Administrator) !== 0n ? PermissionsBitField.All : bits);
  };

  const interactionBase = (channelId: string, user: APIUser) => {
    const channel = channels.get(channelId);
    if (!channel) throw new Error(`fake discord: unknown channel ${channelId}`);
    const guildId = guildOf(channel);
    const member = guildId ? members.get(user.id) : undefined;
    const id = nextId();
    const interactionToken = `aW50ZXJhY3Rpb246${randomBytes(24).toString("base64url")}`;
    return {
      id,
      token: interactionToken,
      common: {
        id,
        application_id: world.applicationId,
        token: interactionToken,
        version: 1,
        channel: channel,
        channel_id: channelId,
        ...(guildId
          ? {
              guild_id: guildId,
              guild: { id: guildId, locale: "en-US", features: [] },
              guild_locale: "en-US",
              member: {
                ...(member ?? {
                  user,
                  roles: [],
                  joined_at: new Date(0).toISOString(),
                  deaf: false,
                  mute: false,
                  flags: 0,
                }),
                user,
                permissions: memberPermissions(member?.roles ?? []),
              },
            }
          : { user }),
        app_permissions: "2248473465835073",
        locale: "en-US",
        entitlements: [],
        authorizing_integration_owners: guildId ? { "0": guildId } : { "1": user.id },
        context: guildId ? 0 : 1,
        attachment_size_limit: 10_485_760,
      },
    };
  };

  return {
    clickButton({ channelId, messageId, customId, user = world.users.alice }) {
      const message = findMessage(channelId, messageId);
      if (!message) throw new Error(`fake discord: no message ${messageId} in ${channelId}`);
      const buttons = (message.components ?? []).flatMap((row) =>
        "components" in row ? (row.components as unknown[]) : [],
      );
      if (!buttons.some((b) => typeof b === "object" && b !== null && "custom_id" in b && b.custom_id === customId)) {
        throw new Error(`fake discord: message ${messageId} has no component with custom_id ${customId}`);
      }
      const base = interactionBase(channelId, user);
      interactions.set(base.id, { token: base.token, createdAt: now(), acknowledged: false, channelId, messageId });
      const payload = {
        ...base.common,
        type: InteractionType.MessageComponent,
        data: { custom_id: customId, component_type: ComponentType.Button },
        message,
      };
      gateway.dispatch("INTERACTION_CREATE", () => payload);
      return { id: base.id, token: base.token };
    },

    runCommand({ channelId, name, user = world.users.alice, options }) {
      const command = commands.find((c) => c.name === name);
      if (!command) throw new Error(`fake discord: command /${name} is not registered (the client would not offer it)`);
      const known = (command.options ?? []).map((o) => o.name);
      for (const option of options ?? []) {
        if (!known.includes(option.name))
          throw new Error(`fake discord: /${name} has no option "${option.name}" (the client would not send it)`);
      }
      const base = interactionBase(channelId, user);
      interactions.set(base.id, { token: base.token, createdAt: now(), acknowledged: false, channelId });
      const data = {
        id: command.id,
        name: command.name,
        type: command.type,
        ...(options?.length
          ? {
              options: options.map((o) => ({
                name: o.name,
                type: ApplicationCommandOptionType.String,
                value: o.value,
              })),
            }
          : {}),
      };
      const payload = { ...base.common, type: InteractionType.ApplicationCommand, data };
      gateway.dispatch("INTERACTION_CREATE", () => payload);
      return { id: base.id, token: base.token };
    },

    runMessageCommand({ channelId, messageId, name, user = world.users.alice }) {
      const command = commands.find((c) => c.name === name && c.type === ApplicationCommandType.Message);
      if (!command)
        throw new Error(`fake discord: no message command "${name}" is registered (the Apps menu would not offer it)`);
      const message = findMessage(channelId, messageId);
      if (!message) throw new Error(`fake discord: no message ${messageId} in ${channelId}`);
      const base = interactionBase(channelId, user);
      // Offered only in the contexts the command was registered for (0 guild, 1 bot DM).
      if (command.contexts && !command.contexts.includes(base.common.context))
        throw new Error(`fake discord: "${name}" is not offered in context ${base.common.context}`);
      interactions.set(base.id, { token: base.token, createdAt: now(), acknowledged: false, channelId });
      const data = {
        id: command.id,
        name: command.name,
        type: ApplicationCommandType.Message,
        target_id: message.id,
        // Discord resolves the target with its content, whatever the bot's intents.
        resolved: { messages: { [message.id]: structuredClone(message) } },
      };
      gateway.dispatch("INTERACTION_CREATE", () => ({
        ...base.common,
        type: InteractionType.ApplicationCommand,
        data,
      }));
      return { id: base.id, token: base.token };
    },

    autocomplete({ channelId, name, option, typed, user = world.users.alice }) {
      const command = commands.find((c) => c.name === name);
      if (!command) throw new Error(`fake discord: command /${name} is not registered (the client would not offer it)`);
      const declared = (command.options ?? []).find((o) => o.name === option) as { autocomplete?: boolean } | undefined;
      if (!declared?.autocomplete)
        throw new Error(`fake discord: /${name} option "${option}" has no autocomplete (the client would not ask)`);
      const base = interactionBase(channelId, user);
      interactions.set(base.id, {
        token: base.token,
        createdAt: now(),
        acknowledged: false,
        channelId,
        autocomplete: true,
      });
      const data = {
        id: command.id,
        name: command.name,
        type: command.type,
        options: [{ name: option, type: ApplicationCommandOptionType.String, value: typed, focused: true }],
      };
      gateway.dispatch("INTERACTION_CREATE", () => ({
        ...base.common,
        type: InteractionType.ApplicationCommandAutocomplete,
        data,
      }));
      return { id: base.id, token: base.token };
    },
  };
}
