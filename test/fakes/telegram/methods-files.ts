/**
 * getFile: the file store's answer (file_path for downloads) or its Bot API error
 * ("invalid file_id", "file is too big"); sendVoice: a voice message from the bot, uploaded as
 * multipart the way grammY sends an InputFile (the bytes are kept for tests to play back), with the
 * real server's refusals (no voice, an empty file, a file_id it does not know, a caption over 1024).
 */
import { toApiMessage } from "./api-objects.js";
import { storeMessage } from "./message-store.js";
import type { MethodTable } from "./method-dispatch.js";
import { ApiFailure, bad } from "./method-outcomes.js";
import { chatFromParam, int, jsonArg, str } from "./method-params.js";
import type { TelegramState } from "./state.js";

/** The file handlers. */
export function fileMethods(state: TelegramState): MethodTable {
  const { files } = state;
  return {
    getfile(p) {
      const answer = files.getFile(p);
      return "result" in answer ? answer.result : new ApiFailure(answer.error.code, answer.error.description);
    },
    sendvoice(p) {
      const chatState = chatFromParam(state, p.chat_id);
      const voice = p.voice;
      if (voice === undefined || voice === "") return bad("there is no voice in the request");
      if (typeof voice === "string") return bad("wrong remote file identifier specified: Wrong string length");
      const upload = voice as { file: string; size: number; bytes: Buffer };
      if (upload.size === 0) return bad("file must be non-empty");
      const caption = str(p.caption) ?? "";
      if (caption.length > 1024) return bad("message caption is too long");
      const replyParams = (p.reply_parameters !== undefined ? jsonArg(p.reply_parameters, "reply parameters") : {}) as {
        message_id?: number;
      };
      const replyTo = replyParams.message_id;
      const threadId = int(p.message_thread_id);
      const duration = int(p.duration);
      const msg = storeMessage(state, chatState, {
        from: state.me,
        text: caption,
        entities: [],
        media: files.botVoice(upload.bytes, duration),
        ...(replyTo !== undefined && chatState.messages.has(replyTo) ? { replyToMessageId: replyTo } : {}),
        ...(threadId !== undefined ? { threadId } : {}),
      });
      files.sentVoices.push({
        chatId: chatState.chat.id,
        messageId: msg.messageId,
        bytes: upload.bytes,
        ...(duration !== undefined ? { duration } : {}),
        ...(caption ? { caption } : {}),
      });
      return toApiMessage(state, msg);
    },
  };
}
