/**
 * What Discord refuses in a message body before storing anything: content that is not a string
 * or over 2000 code points, malformed components (action rows of buttons), an empty message, and
 * allowed_mentions it cannot honour.
 */
import { ComponentType } from "discord.js";
import { apiError, formError, type HttpAnswer } from "./http-answer.js";
import { validateAllowedMentions } from "./mentions.js";

const codePoints = (s: string): number => [...s].length;

/** The 400 Discord would answer for this message body, or undefined; `requireSomething` for a new message. */
export const contentProblem = (body: Record<string, unknown>, requireSomething: boolean): HttpAnswer | undefined => {
  const content = body.content;
  if (content !== undefined && content !== null && typeof content !== "string") {
    return formError("content", "BASE_TYPE_STRING", "Must be a string.");
  }
  if (typeof content === "string" && codePoints(content) > 2000) {
    return formError("content", "BASE_TYPE_MAX_LENGTH", "Must be 2000 or fewer in length.");
  }
  const components = body.components;
  if (components !== undefined && components !== null) {
    const problem = componentsProblem(components);
    if (problem) return problem;
  }
  const hasContent = typeof content === "string" && content.trim() !== "";
  const hasOther =
    (Array.isArray(body.embeds) && body.embeds.length > 0) ||
    (Array.isArray(body.components) && body.components.length > 0) ||
    (Array.isArray(body.sticker_ids) && body.sticker_ids.length > 0) ||
    body.poll !== undefined;
  if (requireSomething && !hasContent && !hasOther) return apiError(400, 50006, "Cannot send an empty message");
  return validateAllowedMentions(body.allowed_mentions);
};

const componentsProblem = (components: unknown): HttpAnswer | undefined => {
  if (!Array.isArray(components) || components.length > 5)
    return formError("components", "BASE_TYPE_MAX_LENGTH", "Must be 5 or fewer in length.");
  for (const [i, row] of components.entries()) {
    const r = row as { type?: unknown; components?: unknown };
    if (
      r.type !== ComponentType.ActionRow ||
      !Array.isArray(r.components) ||
      r.components.length < 1 ||
      r.components.length > 5
    ) {
      return formError(`components.${i}`, "UNION_TYPE_CHOICES", 'Value of field "type" must be one of (1,).');
    }
    for (const [j, c] of r.components.entries()) {
      const b = c as { type?: unknown; style?: unknown; custom_id?: unknown; url?: unknown; label?: unknown };
      const at = `components.${i}.components.${j}`;
      if (b.type !== ComponentType.Button)
        return formError(`${at}.type`, "BASE_TYPE_CHOICES", "Value must be one of (2, 3, 5, 6, 7, 8).");
      if (typeof b.style !== "number" || b.style < 1 || b.style > 6)
        return formError(`${at}.style`, "BASE_TYPE_CHOICES", "Value must be one of (1, 2, 3, 4, 5, 6).");
      if (
        b.style === 5
          ? typeof b.url !== "string"
          : typeof b.custom_id !== "string" || b.custom_id.length < 1 || b.custom_id.length > 100
      ) {
        return formError(`${at}.custom_id`, "BASE_TYPE_REQUIRED", "This field is required");
      }
      if (typeof b.label === "string" && b.label.length > 80)
        return formError(`${at}.label`, "BASE_TYPE_MAX_LENGTH", "Must be 80 or fewer in length.");
    }
  }
  return undefined;
};
