/**
 * The last line of defence: a reply port that never lets the bot's own secrets through (a tool result, an echoed
 * error or a hostile page could put one before the model). Markdown is scrubbed before rendering, the rendered text
 * checked again as the user will see it (a secret pieced together by markup), and whatever is sent scrubbed again.
 */
import { assertNever, type AgentEvent } from "../contracts/agent-events.js";
import type { RenderedText, ReplyPort, ReplyPortFactory } from "../contracts/reply-port.js";
import { visibleText } from "../reply/rendered-length.js";
import { REDACTED, withoutFormatting, type SecretScrubber } from "../security/secret-scrubber.js";
import { cutText } from "../shared/text-cut.js";

/** How many rendered texts a port remembers as already checked. */
const VERIFIED_TEXTS = 4;

/** Wraps one port so that no text it sends or shows contains a secret. */
export function withSecretsScrubbed(port: ReplyPort, scrubber: SecretScrubber): ReplyPort {
  // Texts `format` just checked, so the send/edit/draft of a rendered reply does not scan it again (bounded: a
  // reply's renders only ever go out as the latest one or two).
  const checked = new Set<string>();
  const remember = (text: string) => {
    checked.add(text);
    if (checked.size > VERIFIED_TEXTS) checked.delete(checked.values().next().value as string);
  };
  const leaks = (content: RenderedText) =>
    scrubber.hasLoosely(visibleText(port, content)) || scrubber.has(content.text);
  const clean = (content: RenderedText): RenderedText =>
    checked.has(content.text) || !scrubber.has(content.text)
      ? content
      : { ...content, text: scrubber.scrub(content.text) };

  const wrapped: ReplyPort = {
    // A getter: Discord's limits change as rate-limit headers arrive.
    get limits() {
      return port.limits;
    },
    format(markdown) {
      const rendered = port.format(scrubber.scrub(markdown));
      if (!leaks(rendered)) {
        remember(rendered.text);
        return rendered;
      }
      // The secret only appears once markup is applied or ignored (`123:AA**BB**`): show the visible text, scrubbed.
      const fallback = port.format(scrubber.scrub(withoutFormatting(visibleText(port, rendered))));
      return leaks(fallback) ? port.format(REDACTED) : fallback;
    },
    ...(port.visibleText ? { visibleText: port.visibleText.bind(port) } : {}),
    send: (content, opts) => port.send(clean(content), opts),
    edit: (messageId, content, opts) => port.edit(messageId, clean(content), opts),
  };
  const draft = port.draft?.bind(port);
  if (draft) wrapped.draft = (draftId, content, opts) => draft(draftId, clean(content), opts);
  if (port.typing) wrapped.typing = port.typing.bind(port);
  const observe = port.observe?.bind(port);
  if (observe) {
    const scrubbed = eventScrubber(scrubber);
    wrapped.observe = (event) => {
      for (const safe of scrubbed(event)) observe(safe);
    };
  }
  const sendVoice = port.sendVoice?.bind(port);
  // The spoken words come from the scrubbed answer; the caption is ours, scrubbed all the same.
  if (sendVoice)
    wrapped.sendVoice = (voice, opts) =>
      sendVoice(voice.caption ? { ...voice, caption: scrubber.scrub(voice.caption) } : voice, opts);
  if (port.status) wrapped.status = port.status.bind(port);
  return wrapped;
}

type Delta = Extract<AgentEvent, { type: "text-delta" | "reasoning-delta" }>;

/**
 * The loop's events with every text scrubbed, for a page that draws deltas as they come. A delta's end that may be
 * the start of a secret, or a match reaching the end, waits for the next event, so a secret split across deltas is
 * seen whole and blanked once; ordinary words go out at once.
 */
function eventScrubber(scrubber: SecretScrubber): (event: AgentEvent) => AgentEvent[] {
  let held: Delta | undefined;
  const flush = (): AgentEvent[] => {
    const out = held?.text ? [{ ...held, text: scrubber.scrub(held.text) }] : [];
    held = undefined;
    return out;
  };
  return (event) => {
    if (event.type !== "text-delta" && event.type !== "reasoning-delta")
      return [...flush(), scrubbedEvent(event, scrubber)];
    const out = held && (held.type !== event.type || held.round !== event.round) ? flush() : [];
    const text = (held?.text ?? "") + event.text;
    let cut = text.length - scrubber.secretTail(text);
    for (const [start, end] of scrubber.ranges(text)) if (start < cut && end > cut) cut = start;
    const shown = cutText(text, Math.max(0, cut)); // never half an emoji
    held = { ...event, text: text.slice(shown.length) };
    if (shown) out.push({ ...event, text: scrubber.scrub(shown) });
    return out;
  };
}

/** An agent event with every text it carries scrubbed. */
function scrubbedEvent(event: AgentEvent, scrubber: SecretScrubber): AgentEvent {
  switch (event.type) {
    case "reasoning-delta":
    case "text-delta":
      return scrubber.has(event.text) ? { ...event, text: scrubber.scrub(event.text) } : event;
    case "tool-call":
      return { ...event, arguments: scrubber.scrub(event.arguments) };
    case "tool-result":
      return { ...event, output: scrubber.scrub(event.output) };
    case "finish":
      return { ...event, text: scrubber.scrub(event.text), messages: [] };
    case "round-finish":
      return event;
    default:
      return assertNever(event);
  }
}

/** Wraps a port factory: every port it builds scrubs secrets. */
export function scrubbingPortFactory(factory: ReplyPortFactory, scrubber: SecretScrubber): ReplyPortFactory {
  return (message) => withSecretsScrubbed(factory(message), scrubber);
}
