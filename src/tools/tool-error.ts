/**
 * The error a tool throws when it has something clear to tell the model
 * ("unknown city", "refused: 127.0.0.1 is a loopback address"). Its message is
 * the whole observation: short, no stack, no internals.
 */

/** A failure whose message is meant to be read by the model as the tool's result. */
export class ToolError extends Error {
  override readonly name = "ToolError";
}
