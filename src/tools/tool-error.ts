/** A tool failure whose message is the whole observation for the model: short, no stack, no internals. */
export class ToolError extends Error {
  override readonly name = "ToolError";
}
