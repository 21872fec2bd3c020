/**
 * The lean SSE reader against the SDK's own Stream: the same bytes, cut anywhere, must give the
 * same chunks and the same error, for every llama-server capture and for SSE the captures never
 * show (CR and CRLF framing, comments, multi-line data, `event:` lines, a BOM, broken UTF-8).
 */
import { readdirSync, readFileSync } from "node:fs";
import { Readable } from "node:stream";
import { fileURLToPath } from "node:url";
import fc from "fast-check";
import { APIError } from "openai";
import { Stream } from "openai/streaming";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { readSseChunks } from "../../src/agent/sse-chunk-reader.js";

const dir = fileURLToPath(new URL("./fixtures/llama-server/", import.meta.url));
const captures = readdirSync(dir)
  .filter((name) => name.endsWith(".sse"))
  .map((name) => ({ name, bytes: new Uint8Array(readFileSync(`${dir}${name}`)) }));
const headers = new Headers({ "content-type": "text/event-stream", server: "llama.cpp" });

/** What a reader gave: every chunk, then how it ended. */
interface Reading {
  chunks: unknown[];
  error?: { kind: string; message: string; status?: unknown; error?: unknown; headers?: unknown };
}

async function drain(chunks: AsyncIterable<unknown>): Promise<Reading> {
  const out: unknown[] = [];
  try {
    for await (const chunk of chunks) out.push(chunk);
    return { chunks: out };
  } catch (error) {
    const e = error as Error & { status?: unknown; error?: unknown; headers?: Headers };
    const kind = error instanceof APIError ? `APIError` : e.constructor.name;
    return {
      chunks: out,
      error: {
        kind,
        message: e.message,
        ...(error instanceof APIError ? { status: e.status, error: e.error, headers: e.headers?.get("server") } : {}),
      },
    };
  }
}

/** The SDK's reading of the pieces, from a web stream as fetch would give it. */
function bySdk(pieces: Uint8Array[]): Promise<Reading> {
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const piece of pieces) controller.enqueue(piece);
      controller.close();
    },
  });
  return drain(Stream.fromSSEResponse(new Response(body, { headers }), new AbortController()));
}

/** The lean reader's, from a Node stream as node:http gives it. */
function byReader(pieces: Uint8Array[]): Promise<Reading> {
  return drain(readSseChunks(Readable.from(pieces.map((p) => Buffer.from(p))), headers));
}

/** Cuts bytes at the given offsets. */
function cut(bytes: Uint8Array, offsets: number[]): Uint8Array[] {
  const points = [...new Set(offsets.map((o) => o % (bytes.length + 1)))].sort((a, b) => a - b);
  const pieces: Uint8Array[] = [];
  let from = 0;
  for (const at of [...points, bytes.length]) {
    if (at > from) pieces.push(bytes.subarray(from, at));
    from = Math.max(from, at);
  }
  return pieces;
}

const utf8 = (text: string): Uint8Array => new TextEncoder().encode(text);
const join = (parts: Uint8Array[]): Uint8Array => new Uint8Array(Buffer.concat(parts));

beforeAll(() => {
  // The SDK prints an unparseable event before throwing it; the reader only throws.
  vi.spyOn(console, "error").mockImplementation(() => undefined);
});
afterAll(() => {
  vi.restoreAllMocks();
});

describe("the lean SSE reader reads like the SDK's Stream", () => {
  it("has every streamed capture to read", () => {
    expect(captures.length).toBeGreaterThanOrEqual(37);
  });

  it.each(captures)("$name: whole, and one byte at a time", async ({ name, bytes }) => {
    const expected = await bySdk([bytes]);
    // The context-exceeded captures are a 400's JSON body: nothing to read as SSE, for either.
    if (!name.includes("context_exceeded"))
      expect(expected.chunks.length + (expected.error ? 1 : 0)).toBeGreaterThan(0);
    expect(await byReader([bytes])).toEqual(expected);
    expect(await byReader(cut(bytes, [...bytes.keys()]))).toEqual(expected);
  });

  it("every capture cut at random points gives the SDK's chunks", async () => {
    const expected = new Map(await Promise.all(captures.map(async (c) => [c.name, await bySdk([c.bytes])] as const)));
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...captures),
        fc.array(fc.nat(), { maxLength: 40 }),
        async (capture, offsets) => {
          expect(await byReader(cut(capture.bytes, offsets))).toEqual(expected.get(capture.name));
        },
      ),
      { numRuns: 300 },
    );
  });

  it("llama.cpp's mid-stream error (random_01), cut in two at every byte, throws the SDK's APIError after the same chunks", async () => {
    const capture = captures.find((c) => c.name === "random_01_plain_stream.sse");
    if (!capture) throw new Error("random_01_plain_stream.sse is missing");
    const expected = await bySdk([capture.bytes]);
    expect(expected.error).toMatchObject({
      kind: "APIError",
      status: undefined,
      message: expect.stringContaining("peg-native format"),
    });
    for (let at = 0; at <= capture.bytes.length; at++)
      expect(await byReader(cut(capture.bytes, [at]))).toEqual(expected);
  });

  it("CRLF, CR, comments, fields, multi-line data and a BOM, cut in two at every byte", async () => {
    const text =
      "\uFEFF: a comment\r\n" +
      'data: {"a":\r\ndata:1}\r\n\r\n' +
      'id: 7\rretry: 10\revent: message\rdata: {"é":"😀"}\r\r' +
      'event: thread.run\ndata: {"x":2}\n\n' +
      "event:\n\n" +
      'data:{"choices":[]}\n\r\n' +
      "data\ndata: 3\n\n" +
      "\uFEFF\n" +
      'event: error\ndata: {"message":"not an error object"}\n\n' +
      "data: [DONE]\n\n" +
      'data: {"after":"done"}\n\n';
    const bytes = utf8(text);
    const expected = await bySdk([bytes]);
    expect(expected.chunks.length).toBeGreaterThanOrEqual(6);
    for (let at = 0; at <= bytes.length; at++) expect(await byReader(cut(bytes, [at]))).toEqual(expected);
  });

  it("SSE of random pieces and bytes (broken UTF-8 too), cut at random points, gives what the SDK gives", async () => {
    const piece = fc.oneof(
      fc.constantFrom(
        "data: ",
        "data:",
        "data",
        "event: ",
        "event: thread.message\n",
        "event: error\n",
        ": ping\n",
        "id: 1\n",
        "\n",
        "\r",
        "\r\n",
        "\n\n",
        "\r\n\r\n",
        "[DONE]",
        '{"choices":[{"index":0,"delta":{"content":"hé 😀"}}]}',
        '{"error":{"message":"boom","code":500}}',
        '{"error":null}',
        "null",
        "42",
        '"text"',
        "{",
        "\uFEFF",
        " ",
        "x",
      ),
      fc.uint8Array({ minLength: 1, maxLength: 3 }),
    );
    const bodyArb = fc
      .array(piece, { maxLength: 30 })
      .map((parts) => join(parts.map((p) => (typeof p === "string" ? utf8(p) : p))));
    await fc.assert(
      fc.asyncProperty(bodyArb, fc.array(fc.nat(), { maxLength: 12 }), async (bytes, offsets) => {
        expect(await byReader(cut(bytes, offsets))).toEqual(await bySdk([bytes]));
      }),
      { numRuns: 2_000 },
    );
  });

  it("a body that breaks mid-stream throws fetch's TypeError after the chunks it had", async () => {
    const source = new Readable({ read() {} });
    const reading = drain(readSseChunks(source, headers));
    source.push(Buffer.from('data: {"n":1}\n\ndata: {"n"'));
    setImmediate(() => source.destroy(Object.assign(new Error("aborted"), { code: "ECONNRESET" })));
    const got = await reading;
    expect(got.chunks).toEqual([{ n: 1 }]);
    expect(got.error).toMatchObject({ kind: "TypeError", message: "terminated" });
  });

  it("an abort ends the chunks quietly, dropping what was buffered", async () => {
    const source = new Readable({ read() {} });
    const chunks = readSseChunks(source, headers);
    source.push(Buffer.from('data: {"n":1}\n\n'));
    expect(await chunks.next()).toEqual({ value: { n: 1 }, done: false });
    source.push(Buffer.from('data: {"n":2}\n\n'));
    await new Promise((resolve) => setImmediate(resolve));
    source.destroy(new DOMException("This operation was aborted", "AbortError"));
    expect(await chunks.next()).toEqual({ value: undefined, done: true });
  });

  it("stopping early destroys the body; a slow consumer pauses it", async () => {
    let reads = 0;
    const source = new Readable({
      read() {
        reads++;
        this.push(Buffer.from(`data: {"n":${reads}}\n\n`));
      },
    });
    const chunks = readSseChunks(source, headers);
    expect(await chunks.next()).toEqual({ value: { n: 1 }, done: false });
    await new Promise((resolve) => setTimeout(resolve, 20));
    // Paused at the high-water mark: the body stops being read instead of filling memory.
    const readsWhilePaused = reads;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(source.isPaused()).toBe(true);
    expect(reads).toBe(readsWhilePaused);
    for (let n = 2; n <= 100; n++) expect(await chunks.next()).toEqual({ value: { n }, done: false });
    await chunks.return?.();
    expect(source.destroyed).toBe(true);
  });
});
