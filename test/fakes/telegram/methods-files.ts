/**
 * getFile: the file store's answer (file_path for downloads) or its Bot API error
 * ("invalid file_id", "file is too big").
 */
import type { MethodTable } from "./method-dispatch.js";
import { ApiFailure } from "./method-outcomes.js";
import type { TelegramState } from "./state.js";

/** The file handlers. */
export function fileMethods({ files }: TelegramState): MethodTable {
  return {
    getfile(p) {
      const answer = files.getFile(p);
      return "result" in answer ? answer.result : new ApiFailure(answer.error.code, answer.error.description);
    },
  };
}
