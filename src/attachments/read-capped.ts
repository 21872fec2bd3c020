/** Reading an HTTP body without ever holding more than a limit of it. */
import { tooLargeError } from "./file-source.js";

/** The body's bytes; rejects with AttachmentError("too-large") as soon as it passes `maxBytes`. */
export async function readCapped(response: Response, name: string, maxBytes: number): Promise<Uint8Array> {
  const declared = Number(response.headers.get("content-length") ?? NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel();
    throw tooLargeError(name, declared, maxBytes);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  if (response.body) {
    const reader = response.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > maxBytes) {
        await reader.cancel();
        throw tooLargeError(name, undefined, maxBytes);
      }
      chunks.push(value);
    }
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}
