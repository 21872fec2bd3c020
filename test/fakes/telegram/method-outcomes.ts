/**
 * What a Bot API method handler may answer besides its result: a Bot API error (the
 * `{ ok: false, error_code, description, parameters }` answer), or nothing at all because the
 * client hung up while the method was waiting (an aborted long poll).
 */

/** A Bot API error answer. */
export class ApiFailure {
  constructor(
    readonly code: number,
    readonly description: string,
    readonly parameters?: Record<string, unknown>,
  ) {}
}

/** A 400 with the real server's "Bad Request: …" wording. */
export const bad = (text: string): ApiFailure => new ApiFailure(400, `Bad Request: ${text}`);

/** The client went away before the method finished: nothing is answered. */
export const CLIENT_GONE = Symbol("client gone");
