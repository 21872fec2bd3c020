/**
 * What a REST handler answers, and Discord's error bodies: `{ message, code }` plus, for invalid
 * form bodies (50035), the `errors` tree that names the field.
 */

/** A status, a body (JSON, or text for the HTML pages a proxy sends) and extra headers. */
export class HttpAnswer {
  constructor(
    readonly status: number,
    readonly body: unknown,
    readonly headers: Record<string, string> = {},
  ) {}
}

/** A JSON answer. */
export const json = (status: number, body: unknown): HttpAnswer => new HttpAnswer(status, body);
/** 204 with no body. */
export const noContent = (): HttpAnswer => new HttpAnswer(204, undefined);
/** Discord's JSON error with its numeric code. */
export const apiError = (status: number, code: number, message: string, errors?: unknown): HttpAnswer =>
  json(status, errors === undefined ? { message, code } : { message, code, errors });
/** 400 "Invalid Form Body" naming the field that is wrong. */
export const formError = (field: string, code: string, message: string): HttpAnswer =>
  apiError(400, 50035, "Invalid Form Body", { [field]: { _errors: [{ code, message }] } });
