/** Pictures, files and voice from the chat as configured: file sources, the vision check, the transcriber, the limits. */
import type { Config } from "../config/env-schema.js";
import type { InboundMessage, Platform } from "../contracts/inbound-message.js";
import type { FileSource } from "../contracts/file-source.js";
import { createAttachmentPreparer, type AttachmentPreparer } from "../attachments/prepare-attachments.js";
import { createVisionCapability } from "../agent/vision-capability.js";
import { createDiscordFileSource, type GuardedDownload } from "../bots/discord/discord-file-source.js";
import { createSafeFetch, type SafeFetchOptions } from "../tools/safe-fetch.js";
import type { Logger } from "../observability/logger.js";
import { createTranscriber } from "../voice/transcriber.js";
import { createSpeechSynthesiser } from "../voice/speech-synthesiser.js";
import type { SpokenAnswers } from "../answer/spoken-answer.js";

/** Spoken answers through TTS_BASE_URL, or undefined when it is not set. */
export function spokenAnswersFor(config: Config, logger: Logger): SpokenAnswers | undefined {
  if (!config.TTS_BASE_URL) return undefined;
  return { synthesiser: createSpeechSynthesiser({ baseURL: config.TTS_BASE_URL, voice: config.TTS_VOICE }), logger };
}

/** The Discord file source's download through the project's safe fetch (the same guard as read_url). */
export function safeDownload(opts: Pick<SafeFetchOptions, "lookup" | "connect" | "timeoutMs"> = {}): GuardedDownload {
  return async (url, { maxBytes, allowHostPort, signal }) => {
    const get = createSafeFetch({
      timeoutMs: 30_000,
      ...opts,
      allowHosts: [allowHostPort],
      maxBytes: maxBytes + 1,
      maxRedirects: 0,
    });
    const response = await get(url, { ...(signal ? { signal } : {}), accept: "*/*" });
    return { status: response.status, body: new Uint8Array(response.body), truncated: response.truncated };
  };
}

/** Builds the worker's attachment preparer; `telegramFiles` downloads through the worker's Telegram REST client. */
export function attachmentPreparerFor(
  config: Config,
  deps: {
    logger: Logger;
    telegramFiles?: FileSource;
    /** The model answering this conversation (its /model choice); MODEL by default. */
    modelFor?: (message: InboundMessage) => Promise<string>;
  },
): AttachmentPreparer {
  const sources: Partial<Record<Platform, FileSource>> = {};
  if (config.TELEGRAM_BOT_TOKEN && deps.telegramFiles) sources.telegram = deps.telegramFiles;
  if (config.DISCORD_BOT_TOKEN)
    sources.discord = createDiscordFileSource({ apiBase: config.DISCORD_API_BASE, download: safeDownload() });
  const vision = createVisionCapability({
    mode: config.MODEL_VISION,
    baseURL: config.OPENAI_BASE_URL,
    modelServer: config.MODEL_SERVER,
    apiKey: config.OPENAI_API_KEY,
    onProbeFailed: (err, model) =>
      deps.logger.warn(
        { err, model },
        "could not ask the model server whether the model takes images; answering without them",
      ),
  });
  // Unset STT_BASE_URL: voice notes get a line saying voice is not set up.
  const transcriber = config.STT_BASE_URL
    ? createTranscriber({
        baseURL: config.STT_BASE_URL,
        model: config.STT_MODEL,
        ...(config.STT_API_KEY ? { apiKey: config.STT_API_KEY } : {}),
      })
    : undefined;
  return createAttachmentPreparer({
    sources,
    // The conversation may have switched models (/model): ask about the one that will answer (cached per model).
    visionFor: async (message) => vision.supports(deps.modelFor ? await deps.modelFor(message) : config.MODEL),
    maxFileBytes: config.MAX_IMAGE_BYTES,
    maxImages: config.MAX_IMAGES_PER_MESSAGE,
    audio: { maxSeconds: config.MAX_AUDIO_SECONDS, ...(transcriber ? { transcriber } : {}) },
    logger: deps.logger,
  });
}
