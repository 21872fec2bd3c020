/**
 * The chat page: the conversation's events (Server-Sent Events from `/api/events`, the whole
 * stream again after a reload) drawn in order: the question, reasoning (collapsed), each tool
 * call with its arguments and state, its result (shortened, expandable), and the answer typing
 * out, rendered from Markdown. Commands typed in the box work as in any chat; the buttons send
 * the same commands.
 */
import type { WebEvent } from "../src/bots/web/web-events.js";
import { me, postJson, type Me } from "./api.js";
import { clear, h } from "./dom.js";
import { renderMarkdown } from "./markdown.js";

const RESULT_PREVIEW_CHARS = 120;

interface RoundView {
  root: HTMLElement;
  reasoning?: { pre: HTMLElement };
  tools?: HTMLElement;
  text?: { element: HTMLElement; markdown: string };
}

interface Turn {
  job: string;
  root: HTMLElement;
  answer: HTMLElement;
  rounds: Map<number, RoundView>;
  calls: Map<string, HTMLElement>;
  answered: string;
  done: boolean;
}

/** Pretty arguments when they are JSON, as written otherwise. */
function showArgs(raw: string): string {
  try {
    return JSON.stringify(JSON.parse(raw));
  } catch {
    return raw;
  }
}

/** Starts the chat page for the signed-in user. */
export function startChat(who: Me): void {
  const log = h("main", { class: "log", "aria-live": "polite" });
  const input = h("textarea", { name: "text", rows: "2", placeholder: "Message (Enter sends, Shift+Enter: new line)" });
  const send = h("button", { type: "submit", class: "send" }, "Send");
  const stop = h("button", { type: "button", class: "stop", hidden: "" }, "Stop");
  const composer = h("form", { class: "composer" }, input, stop, send);
  const think = h("select", { class: "think", "aria-label": "Thinking" });
  for (const [value, label] of [
    ["", "Thinking…"],
    ["/think on", "Thinking on"],
    ["/think off", "Thinking off"],
    ["/reasoning collapsed", "Reasoning folded"],
    ["/reasoning full", "Reasoning open"],
    ["/reasoning off", "Reasoning hidden"],
  ] as const) {
    think.append(h("option", { value }, label));
  }
  const reset = h("button", { type: "button", class: "reset" }, "New chat");
  const signOut = h("button", { type: "button", class: "signout" }, "Sign out");
  const bar = h(
    "header",
    { class: "bar" },
    h("strong", {}, "chatbot"),
    h("span", { class: "who" }, who.name),
    who.admin ? h("a", { href: "/console" }, "Console") : null,
    think,
    reset,
    signOut,
  );
  document.body.append(bar, log, composer);
  // The chat's /reasoning: the stylesheet hides reasoning for "off"; "full" opens each block as it comes.
  let reasoningMode = who.reasoning;
  const showReasoning = (mode: Me["reasoning"]) => {
    reasoningMode = mode;
    document.body.dataset.reasoning = mode;
    for (const details of log.querySelectorAll("details.reasoning"))
      (details as HTMLDetailsElement).open = mode === "full";
  };
  showReasoning(who.reasoning);

  const turns = new Map<string, Turn>();
  const pending = new Set<RoundView>();
  let frame = 0;

  const scroll = () => {
    if (log.scrollHeight - log.scrollTop - log.clientHeight < 200) log.scrollTop = log.scrollHeight;
  };
  const busy = () => [...turns.values()].some((t) => !t.done);
  const updateButtons = () => {
    stop.hidden = !busy();
  };

  const turnFor = (job: string): Turn => {
    let turn = turns.get(job);
    if (!turn) {
      const answer = h("div", { class: "answer" });
      const root = h("article", { class: "turn", "data-job": job }, answer);
      log.append(root);
      turn = { job, root, answer, rounds: new Map(), calls: new Map(), answered: "", done: false };
      turns.set(job, turn);
    }
    return turn;
  };
  const roundFor = (turn: Turn, round: number): RoundView => {
    let view = turn.rounds.get(round);
    if (!view) {
      view = { root: h("section", { class: "round", "data-round": String(round) }) };
      turn.answer.append(view.root);
      turn.rounds.set(round, view);
    }
    return view;
  };
  // Markdown is re-rendered once per batch of events (a task), not per token; not per animation frame either,
  // which a hidden or busy page delays: the first word shows as soon as it arrives.
  const renderSoon = (view: RoundView) => {
    pending.add(view);
    if (frame) return;
    frame = window.setTimeout(() => {
      frame = 0;
      for (const v of pending) {
        if (v.text) v.text.element.replaceChildren(renderMarkdown(v.text.markdown));
      }
      pending.clear();
      scroll();
    });
  };
  const note = (turn: Turn, text: string) => turn.answer.append(h("p", { class: "note" }, text));

  const apply = (event: WebEvent) => {
    switch (event.kind) {
      case "user": {
        const turn = turnFor(event.job);
        turn.root.prepend(h("div", { class: "user" }, h("span", { class: "name" }, event.name), event.text));
        break;
      }
      case "begin": {
        const turn = turnFor(event.job);
        clear(turn.answer);
        turn.rounds.clear();
        turn.calls.clear();
        turn.answered = "";
        turn.done = false;
        break;
      }
      case "reasoning": {
        const view = roundFor(turnFor(event.job), event.round);
        if (!view.reasoning) {
          const pre = h("pre");
          // Collapsed by default: the answer is what the user came for.
          const details = h("details", { class: "reasoning" }, h("summary", {}, "💭 Thinking"), pre);
          details.open = reasoningMode === "full";
          view.root.prepend(details);
          view.reasoning = { pre };
        }
        view.reasoning.pre.append(event.text);
        break;
      }
      case "text": {
        const turn = turnFor(event.job);
        const view = roundFor(turn, event.round);
        if (!view.text) {
          view.text = { element: h("div", { class: "text" }), markdown: "" };
          view.root.append(view.text.element);
        }
        view.text.markdown += event.text;
        turn.answered = view.text.markdown;
        renderSoon(view);
        break;
      }
      case "tool-call": {
        const turn = turnFor(event.job);
        const view = roundFor(turn, event.round);
        if (!view.tools) {
          view.tools = h("div", { class: "tools" });
          view.root.append(view.tools);
        }
        const card = h(
          "div",
          { class: "tool", "data-status": "running", "data-tool": event.name },
          h("span", { class: "tool-name" }, `🔧 ${event.name}`),
          h("code", { class: "tool-args" }, showArgs(event.args)),
          h("span", { class: "tool-state" }, "running"),
        );
        view.tools.append(card);
        turn.calls.set(event.id, card);
        break;
      }
      case "tool-result": {
        const card = turnFor(event.job).calls.get(event.id);
        if (!card) break;
        card.dataset.status = event.ok ? "done" : "failed";
        const state = card.querySelector(".tool-state");
        if (state) state.textContent = event.ok ? `done · ${event.ms} ms` : "failed";
        const preview =
          event.output.length > RESULT_PREVIEW_CHARS ? `${event.output.slice(0, RESULT_PREVIEW_CHARS)}…` : event.output;
        card.append(h("details", { class: "tool-result" }, h("summary", {}, preview), h("pre", {}, event.output)));
        break;
      }
      case "round": {
        // Text before a round of tool calls was a preamble: shown dimmer, the answer comes after.
        const view = turnFor(event.job).rounds.get(event.round);
        if (event.reason === "tool_calls" && view?.text) view.text.element.classList.add("preamble");
        break;
      }
      case "final": {
        const turn = turnFor(event.job);
        turn.done = true;
        turn.root.classList.add("done");
        const paragraphs = event.text.trim().split(/\n{2,}/);
        const last = paragraphs.at(-1) ?? "";
        if (turn.answered.trim() === "") {
          // Nothing streamed (a failure, or an answer that came whole): the final text is the answer.
          const view = roundFor(turn, 1_000);
          view.text = { element: h("div", { class: "text" }), markdown: event.text };
          view.root.append(view.text.element);
          renderSoon(view);
        } else if (/^(⏹|⚠️|✂️)/u.test(last) && !turn.answered.includes(last)) {
          note(turn, last.replace(/_/g, ""));
        }
        break;
      }
      case "notice":
        log.append(h("p", { class: "notice" }, event.text));
        break;
      case "reset":
        clear(log);
        turns.clear();
        break;
    }
    updateButtons();
    scroll();
  };

  const source = new EventSource("/api/events");
  source.onmessage = (message: MessageEvent<string>) => {
    try {
      apply(JSON.parse(message.data) as WebEvent);
    } catch (error) {
      console.warn("could not draw an event", error);
    }
  };
  source.onerror = () => {
    // EventSource reconnects by itself (Last-Event-ID resumes); a lost session needs a new sign-in.
    void fetch("/api/me", { credentials: "same-origin" }).then((res) => {
      if (res.status === 401) location.assign("/login");
    });
  };

  const say = async (text: string) => {
    if (text.trim() === "") return;
    await postJson(who, "/api/send", { text });
  };
  composer.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = input.value;
    input.value = "";
    void say(text);
  });
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      composer.requestSubmit();
    }
  });
  stop.addEventListener("click", () => void postJson(who, "/api/stop"));
  reset.addEventListener("click", () => void say("/reset"));
  think.addEventListener("change", () => {
    const command = think.value;
    think.value = "";
    void say(command).then(() =>
      command.startsWith("/reasoning") ? me().then((now) => showReasoning(now.reasoning)) : undefined,
    );
  });
  signOut.addEventListener("click", () => {
    void postJson(who, "/api/logout").finally(() => location.assign("/login"));
  });
  input.focus();
}
