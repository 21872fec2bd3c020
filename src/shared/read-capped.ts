/** Reading an HTTP body without ever holding more than a limit of it. */

/** The body, or how it went over the limit (`declared` when the server said its length up front). */
export type CappedBody = { ok: true; bytes: Uint8Array } | { ok: false; declared?: number };

/** Reads the body up to `maxBytes`; stops reading (and cancels the body) as soon as it passes the limit. */
export async function readCapped(response: Response, maxBytes: number): Promise<CappedBody> {
  const declared = Number(response.headers.get("content-length") ?? NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    await response.body?.cancel();
    return { ok: false, declared };
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
        return { ok: false };
      }
      chunks.push(value);
    }
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return { ok: true, bytes };
}
