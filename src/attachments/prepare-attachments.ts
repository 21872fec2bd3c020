/**
 * A message's attachments made into what the model and the user get: pictures as image parts (when the model
 * can see), text files, PDFs and voice notes as text, one marker line each for the history (`[image: a.jpg]`),
 * and a notice for every file that could not be used. A bad file never throws: it becomes a notice and a marker.
 */
import type { ChatImage } from "../contracts/chat-message.js";
import type { AttachmentRef, InboundMessage, Platform } from "../contracts/inbound-message.js";
import { attachmentKind } from "./attachment-kind.js";
import { AttachmentError, tooLargeError, type FileSource } from "../contracts/file-source.js";
import { pdfToText, type PdfBudget } from "./pdf-text.js";
import { prepareImage } from "./prepare-image.js";
import { inlineTextFile, MAX_TEXT_FILE_BYTES } from "./text-file.js";
import { hearAudio, type AudioOptions } from "./prepare-audio.js";

/** What one message's attachments became. */
export interface PreparedAttachments {
  images: ChatImage[];
  /** For the model, after the question: the markers, then the inlined texts. Empty without attachments. */
  forModel: string;
  /** For the history: the markers only (no bytes, no file texts). */
  forHistory: string;
  /** Lines shown to the user above the answer (refusals, "this model cannot see images", a voice note's transcript). */
  notices: string[];
  /** False when there is nothing to answer: no text, and only voice notes that could not be heard. */
  answerable: boolean;
}

/** Prepares a message's attachments. */
export interface AttachmentPreparer {
  prepare(message: InboundMessage, signal?: AbortSignal): Promise<PreparedAttachments>;
}

/** Where files come from and the limits on them. */
interface AttachmentPreparerOptions {
  sources: Partial<Record<Platform, FileSource>>;
  /** Whether the model answering this message takes images (MODEL_VISION, per model). */
  visionFor(message: InboundMessage): Promise<boolean>;
  /** MAX_IMAGE_BYTES: the most any one file may be, before decoding. */
  maxFileBytes: number;
  /** MAX_IMAGES_PER_MESSAGE. */
  maxImages: number;
  /** Voice notes and audio: the transcriber (none: voice is not set up) and MAX_AUDIO_SECONDS. */
  audio?: AudioOptions;
  logger?: { warn(obj: object, msg?: string): void };
}

/** The line the user gets when pictures reach a model that cannot see them. */
export const NO_VISION_NOTICE =
  "🖼️ This model cannot see pictures, so I answered from the text only. To let me see them, run a vision model " +
  "(for example Qwen3-VL-2B with its mmproj file, as the README shows) and set `MODEL_VISION` to `auto` or `on`.";

/** Characters of one text file or PDF the model is shown. */
const TEXT_BUDGET_CHARS = 8000;
const PDF_BUDGET: PdfBudget = { maxPages: 20, maxChars: TEXT_BUDGET_CHARS };
const NO_PREPARED: PreparedAttachments = { images: [], forModel: "", forHistory: "", notices: [], answerable: true };

interface Outcome {
  marker: string;
  /** A voice note nobody could hear: nothing the model could answer. */
  unheard?: boolean;
  image?: ChatImage;
  text?: string;
  notice?: string;
}

/**
 * A file name on one line, without brackets, so it cannot forge a marker or a transcript line; bidi controls
 * (U+202A–U+202E, U+2066–U+2069) go too: with U+202E "invoice‮fdp.exe" reads as "invoiceexe.pdf".
 */
function displayName(name: string): string {
  const clean = name
    .replace(/[\u202A-\u202E\u2066-\u2069]/g, "")
    .replace(/[\r\n\t[\]`]+/g, " ")
    .trim()
    .slice(0, 100);
  return clean === "" ? "file" : clean;
}

/** Creates the preparer the worker runs before each answer. */
export function createAttachmentPreparer(opts: AttachmentPreparerOptions): AttachmentPreparer {
  const one = async (
    message: InboundMessage,
    original: AttachmentRef,
    canSee: boolean,
    signal?: AbortSignal,
  ): Promise<Outcome> => {
    const source = opts.sources[message.platform];
    const name = displayName(original.name);
    const ref = { ...original, name };
    const kind = attachmentKind(ref);
    const download = async (maxBytes = opts.maxFileBytes): Promise<Uint8Array> => {
      if (!source) throw new AttachmentError("unavailable", `${name} could not be downloaded here`);
      // The platform's size is checked before anything is downloaded; the download stops at the limit anyway.
      if (ref.size !== undefined && ref.size > maxBytes) throw tooLargeError(name, ref.size, maxBytes);
      return source.download(ref, { maxBytes, ...(signal ? { signal } : {}) });
    };
    try {
      switch (kind) {
        case "image": {
          if (!canSee) return { marker: `[image: ${name} (not shown: this model cannot see images)]` };
          const image = await prepareImage(name, await download());
          return {
            marker: `[image: ${name}]`,
            image: { name: image.name, mediaType: image.mediaType, base64: image.base64 },
          };
        }
        case "text": {
          const bytes = await download(Math.min(MAX_TEXT_FILE_BYTES, opts.maxFileBytes));
          return { marker: `[file: ${name}]`, text: inlineTextFile(name, bytes, TEXT_BUDGET_CHARS) };
        }
        case "pdf":
          return {
            marker: `[file: ${name}]`,
            text: await pdfToText(name, await download(), PDF_BUDGET, signal),
          };
        case "audio": {
          const heard = await hearAudio(
            ref,
            () => download(),
            { maxSeconds: 300, ...opts.audio, ...(opts.logger ? { logger: opts.logger } : {}) },
            signal,
          );
          return { marker: heard.marker, notice: heard.notice, ...(heard.heard ? {} : { unheard: true }) };
        }
        case "other":
          return {
            marker: `[file: ${name} (not readable)]`,
            notice: `📎 I cannot read ${name} (${ref.contentType || "unknown type"}): send a picture, a PDF, a text file or a voice message.`,
          };
      }
    } catch (error) {
      if (signal?.aborted) throw error;
      const reason = error instanceof AttachmentError ? error.message : `${name} could not be read`;
      if (!(error instanceof AttachmentError))
        opts.logger?.warn({ err: error, attachment: name }, "attachment preparation failed");
      return {
        marker: `[${kind === "image" ? "image" : "file"}: ${name} (not readable)]`,
        notice: `⚠️ ${reason}.`,
        ...(kind === "audio" ? { unheard: true } : {}),
      };
    }
  };

  return {
    async prepare(message, signal) {
      const refs = message.attachments ?? [];
      if (refs.length === 0) return NO_PREPARED;
      const images = refs.filter((r) => attachmentKind(r) === "image");
      const canSee = images.length > 0 ? await opts.visionFor(message) : false;
      const kept = new Set(images.slice(0, opts.maxImages));
      const outcomes = await Promise.all(
        refs.map((ref): Promise<Outcome> | Outcome =>
          attachmentKind(ref) === "image" && !kept.has(ref)
            ? { marker: `[image: ${displayName(ref.name)} (not shown: over the limit of ${opts.maxImages} pictures)]` }
            : one(message, ref, canSee, signal),
        ),
      );
      const notices = outcomes.flatMap((o) => (o.notice ? [o.notice] : []));
      if (images.length > opts.maxImages && canSee)
        notices.push(`🖼️ I looked at the first ${opts.maxImages} of ${images.length} pictures only.`);
      if (images.length > 0 && !canSee) notices.unshift(NO_VISION_NOTICE);
      const markers = outcomes.map((o) => o.marker).join("\n");
      const texts = outcomes.flatMap((o) => (o.text ? [o.text] : []));
      return {
        images: outcomes.flatMap((o) => (o.image ? [o.image] : [])),
        forModel: [markers, ...texts].join("\n\n"),
        forHistory: markers,
        notices,
        answerable: message.text.trim() !== "" || outcomes.some((o) => !o.unheard),
      };
    },
  };
}
