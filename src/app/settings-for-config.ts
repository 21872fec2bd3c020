/** The conversation settings store as configured (both roles use the same defaults). */
import type { Redis } from "ioredis";
import type { ScheduleCommands } from "../contracts/schedule-commands.js";
import type { Config } from "../config/env-schema.js";
import { createSettingsStore, type SettingsLogger, type SettingsStore } from "../settings/settings-store.js";
import { createSettingsService } from "../settings/settings-service.js";
import { createModelChoices } from "../settings/model-choices.js";
import type { SettingsPort } from "../contracts/settings-port.js";
import type { ToolCatalogue } from "../tools/tool-catalogue.js";

/** Builds the settings store of this deployment; its defaults are MODEL, ENABLE_THINKING and SHOW_REASONING. */
export function settingsStoreFor(config: Config, redis: Redis, logger?: SettingsLogger): SettingsStore {
  return createSettingsStore({
    redis,
    prefix: config.KEY_PREFIX,
    defaults: { model: config.MODEL, thinking: config.ENABLE_THINKING, reasoning: config.SHOW_REASONING },
    ...(logger ? { logger } : {}),
  });
}

/** The settings commands' service of this deployment: MODEL_CHOICES (or the server's list), ADMIN_USER_IDS, the tool catalogue. */
export function settingsServiceFor(
  config: Config,
  redis: Redis,
  toolCatalogue: ToolCatalogue,
  logger?: SettingsLogger,
  schedules?: ScheduleCommands,
): SettingsPort {
  return createSettingsService({
    ...(schedules ? { schedules } : {}),
    store: settingsStoreFor(config, redis, logger),
    models: createModelChoices({
      ...(config.MODEL_CHOICES ? { configured: config.MODEL_CHOICES } : {}),
      defaultModel: config.MODEL,
      baseUrl: config.OPENAI_BASE_URL,
      apiKey: config.OPENAI_API_KEY,
      ...(logger ? { logger } : {}),
    }),
    toolCatalogue,
    botAdmins: config.ADMIN_USER_IDS,
    speech: config.TTS_BASE_URL !== undefined,
  });
}
