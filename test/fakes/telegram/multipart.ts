/**
 * multipart/form-data as the Bot API reads it. The real server takes what grammY writes (no space
 * after `content-disposition:` or between parameters, an unquoted filename); undici's FormData
 * parser refuses exactly that, so the fake reads parts itself. Fields give strings, files
 * `{ file: name, size }`; a field `attach://<part>` (how grammY sends a file parameter) gets that
 * part's file, as on the real server.
 */

/** The parameters of a multipart body; throws the Bot API's 400 text when it is not one. */
export function parseMultipart(body: Buffer, contentType: string): Record<string, unknown> {
  const match = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType);
  const name = (match?.[1] ?? match?.[2])?.trim();
  if (!name) throw new Error("Bad Request: multipart boundary not found");
  const boundary = Buffer.from(`--${name}`);
  const params: Record<string, unknown> = {};
  let at = body.indexOf(boundary);
  if (at < 0) throw new Error("Bad Request: multipart body without its boundary");
  for (;;) {
    let start = at + boundary.length;
    if (body.subarray(start, start + 2).toString("latin1") === "--") return attached(params);
    if (body[start] === 13 && body[start + 1] === 10) start += 2;
    const next = body.indexOf(boundary, start);
    if (next < 0) throw new Error("Bad Request: multipart body ends without its closing boundary");
    const end = body[next - 2] === 13 && body[next - 1] === 10 ? next - 2 : next;
    readPart(body.subarray(start, end), params);
    at = next;
  }
}

/** Resolves `attach://<part>` fields to the file part they name (the part itself is then no parameter). */
function attached(params: Record<string, unknown>): Record<string, unknown> {
  for (const [key, value] of Object.entries(params)) {
    if (typeof value !== "string" || !value.startsWith("attach://")) continue;
    const part = value.slice("attach://".length);
    if (typeof params[part] !== "object") continue;
    params[key] = params[part];
    delete params[part];
  }
  return params;
}

function readPart(part: Buffer, params: Record<string, unknown>): void {
  const headEnd = part.indexOf("\r\n\r\n");
  if (headEnd < 0) throw new Error("Bad Request: multipart part without headers");
  const disposition = part
    .subarray(0, headEnd)
    .toString("utf8")
    .split("\r\n")
    .find((line) => /^content-disposition\s*:/i.test(line));
  const field = disposition === undefined ? undefined : parameter(disposition, "name");
  if (field === undefined) throw new Error("Bad Request: multipart part without a name");
  const content = part.subarray(headEnd + 4);
  const filename = parameter(disposition as string, "filename");
  // Defined, not assigned: a part named __proto__ must stay a parameter, not become the prototype.
  Object.defineProperty(params, field, { value: undefined, enumerable: true, writable: true, configurable: true });
  params[field] =
    filename === undefined ? content.toString("utf8") : { file: filename, size: content.length, bytes: content };
}

/** A `; key=value` parameter of a header, quoted or not. */
function parameter(header: string, key: string): string | undefined {
  const found = new RegExp(`;\\s*${key}\\s*=\\s*(?:"((?:[^"\\\\]|\\\\.)*)"|([^;]*))`, "i").exec(header);
  if (!found) return undefined;
  return found[1] !== undefined ? found[1].replace(/\\(.)/g, "$1") : (found[2] ?? "").trim();
}
