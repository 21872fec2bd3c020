/** Reading a body without ever holding more than a limit of it. */

/** Collects at most `maxBytes` of the chunks (`truncated` when there were more); the caller stops the source. */
export async function collectCapped(
  chunks: AsyncIterable<Uint8Array>,
  maxBytes: number,
): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  const kept: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  for await (const chunk of chunks) {
    if (size + chunk.length > maxBytes) {
      kept.push(chunk.subarray(0, maxBytes - size));
      size = maxBytes;
      truncated = true;
      break;
    }
    kept.push(chunk);
    size += chunk.length;
  }
  const out = new Uint8Array(size);
  let at = 0;
  for (const c of kept) {
    out.set(c, at);
    at += c.length;
  }
  return { bytes: out, truncated };
}

/** Reads at most `maxBytes` of an HTTP body (`truncated` when there was more) and stops the download there. */
export async function readCapped(res: Response, maxBytes: number): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  if (!res.body) return { bytes: new Uint8Array(), truncated: false };
  const reader = res.body.getReader();
  const chunks: AsyncIterable<Uint8Array> = {
    async *[Symbol.asyncIterator]() {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        yield value;
      }
    },
  };
  try {
    return await collectCapped(chunks, maxBytes);
  } finally {
    // Stop the download when we stop reading (cap reached or an error).
    await reader.cancel().catch(() => undefined);
  }
}
