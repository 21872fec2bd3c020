/**
 * The admin console: the bot's health and main figures in plain words (from `/healthz` and
 * `/metrics`), the MCP servers and tools the workers publish, every platform's conversations,
 * one conversation's history read-only with its reset and settings, and the queue dashboard's link.
 */
import { getJson, postJson, type Me } from "./api.js";
import { clear, h } from "./dom.js";

interface ConversationSummary {
  key: string;
  platform: string;
  title: string;
  lastActivity?: number;
  messages: number;
}
interface ConsoleMessage {
  role: string;
  content: string;
  name?: string;
  toolCalls?: string[];
}
interface ToolGroup {
  source: string;
  state?: string;
  error?: string;
  tools: { name: string; description: string }[];
}

/** Prometheus text → sums per metric name and label filter. */
function parseMetrics(text: string): { name: string; labels: string; value: number }[] {
  const out: { name: string; labels: string; value: number }[] = [];
  for (const line of text.split("\n")) {
    const match = /^([a-z_:][a-z0-9_:]*)(\{[^}]*\})?\s+(\S+)/i.exec(line);
    if (match) out.push({ name: match[1] ?? "", labels: match[2] ?? "", value: Number(match[3]) });
  }
  return out;
}

function sum(samples: ReturnType<typeof parseMetrics>, name: string, label?: string): number {
  return samples
    .filter((s) => s.name === name && (label === undefined || s.labels.includes(label)))
    .reduce((total, s) => total + (Number.isFinite(s.value) ? s.value : 0), 0);
}

function ago(at: number | undefined): string {
  if (at === undefined) return "—";
  const seconds = Math.max(0, Math.round((Date.now() - at) / 1000));
  if (seconds < 90) return `${seconds} s ago`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min ago`;
  if (seconds < 129_600) return `${Math.round(seconds / 3600)} h ago`;
  return `${Math.round(seconds / 86_400)} days ago`;
}

/** Starts the console page. */
export function startConsole(who: Me): void {
  const health = h("section", { class: "panel health" }, h("h2", {}, "Health"));
  const tools = h("section", { class: "panel tools-panel" }, h("h2", {}, "Tools and MCP servers"));
  const list = h("section", { class: "panel conversations" }, h("h2", {}, "Conversations"));
  const detail = h("section", { class: "panel detail", hidden: "" });
  document.body.append(
    h(
      "header",
      { class: "bar" },
      h("strong", {}, "chatbot console"),
      h("span", { class: "who" }, who.name),
      h("a", { href: "/" }, "Chat"),
      h("a", { href: "/admin/queues" }, "Queue dashboard"),
    ),
    h("main", { class: "console" }, health, list, detail, tools),
  );

  const showHealth = async () => {
    const body = h("div");
    try {
      const [status, metricsText] = await Promise.all([
        fetch("/healthz").then((r) => r.json() as Promise<{ status: string; checks: Record<string, string> }>),
        fetch("/metrics").then((r) => r.text()),
      ]);
      const m = parseMetrics(metricsText);
      const lines = [
        `The bot is ${status.status === "ok" ? "healthy" : status.status}: ${Object.entries(status.checks)
          .map(([name, result]) => `${name} ${result}`)
          .join(", ")}.`,
        `${sum(m, "chatbot_queue_depth", 'state="waiting"')} messages waiting, ${sum(m, "chatbot_active_conversations")} answers being written.`,
        `${sum(m, "chatbot_jobs_total", 'outcome="done"')} answers done, ${sum(m, "chatbot_jobs_total", 'outcome="failed"')} given up, ${sum(m, "chatbot_jobs_total", 'outcome="cancelled"')} stopped.`,
        `${sum(m, "chatbot_messages_in_total")} messages received; ${sum(m, "chatbot_tool_calls_total")} tool calls (${sum(m, "chatbot_tool_calls_total", 'outcome="error"')} failed).`,
      ];
      const visibleCount = sum(m, "chatbot_first_visible_seconds_count");
      if (visibleCount > 0) {
        const mean = sum(m, "chatbot_first_visible_seconds_sum") / visibleCount;
        lines.push(`The first sign of an answer shows after ${mean.toFixed(2)} s on average.`);
      }
      for (const line of lines) body.append(h("p", {}, line));
    } catch (error) {
      body.append(h("p", { class: "problem" }, `Could not read the health: ${(error as Error).message}`));
    }
    health.querySelector("div")?.remove();
    health.append(body);
  };

  const showTools = async () => {
    const { groups } = await getJson<{ groups: ToolGroup[] }>("/api/admin/tools");
    const body = h("div");
    if (groups.length === 0)
      body.append(h("p", {}, "No worker has published its tools lately (is a worker running?)."));
    for (const group of groups) {
      const state = group.state ? ` — ${group.state}${group.error ? `: ${group.error}` : ""}` : "";
      body.append(
        h("h3", { "data-source": group.source }, `${group.source}${state}`),
        h("p", { class: "tool-names" }, ...group.tools.map((t) => h("code", { title: t.description }, t.name))),
      );
    }
    tools.querySelector("div")?.remove();
    tools.append(body);
  };

  const open = async (row: ConversationSummary) => {
    detail.hidden = false;
    clear(detail);
    const { messages } = await getJson<{ messages: ConsoleMessage[] }>(
      `/api/admin/history?key=${encodeURIComponent(row.key)}`,
    );
    const answer = h("p", { class: "settings-answer" });
    const command = h("input", { name: "command", placeholder: "think off · model qwen3-1.7b · reasoning full" });
    const settingsForm = h("form", { class: "settings" }, command, h("button", { type: "submit" }, "Apply"));
    settingsForm.addEventListener("submit", (event) => {
      event.preventDefault();
      void postJson<{ text: string }>(who, "/api/admin/settings", { key: row.key, text: command.value }).then(
        (result) => {
          answer.textContent = result.text;
        },
        (error: Error) => {
          answer.textContent = error.message;
        },
      );
    });
    const reset = h("button", { type: "button", class: "reset" }, "Reset this conversation");
    reset.addEventListener("click", () => {
      if (!confirm(`Clear the history of ${row.key}?`)) return;
      void postJson(who, "/api/admin/reset", { key: row.key }).then(() => Promise.all([open(row), showList()]));
    });
    const history = h("ol", { class: "history" });
    for (const m of messages) {
      const who = m.role === "user" ? (m.name ?? "user") : m.role;
      const body = m.toolCalls?.length
        ? `${m.content}${m.content ? "\n" : ""}→ ${m.toolCalls.join("\n→ ")}`
        : m.content;
      history.append(h("li", { "data-role": m.role }, h("span", { class: "role" }, who), h("pre", {}, body)));
    }
    if (messages.length === 0) history.append(h("li", {}, "(no stored messages)"));
    detail.append(h("h2", {}, row.key), h("div", { class: "actions" }, reset), settingsForm, answer, history);
    void postJson<{ text: string }>(who, "/api/admin/settings", { key: row.key, text: "settings" }).then((r) => {
      if (!answer.textContent) answer.textContent = r.text;
    });
  };

  const showList = async () => {
    const { conversations } = await getJson<{ conversations: ConversationSummary[] }>("/api/admin/conversations");
    const table = h(
      "table",
      {},
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          h("th", {}, "Platform"),
          h("th", {}, "Title"),
          h("th", {}, "Last activity"),
          h("th", {}, "Messages"),
        ),
      ),
    );
    const body = h("tbody");
    for (const row of conversations) {
      const title = h("button", { type: "button", class: "linklike" }, row.title || row.key);
      title.addEventListener("click", () => void open(row));
      body.append(
        h(
          "tr",
          { "data-key": row.key },
          h("td", {}, row.platform),
          h("td", {}, title),
          h("td", {}, ago(row.lastActivity)),
          h("td", {}, String(row.messages)),
        ),
      );
    }
    table.append(body);
    list.querySelector("table, p")?.remove();
    list.append(conversations.length ? table : h("p", {}, "No conversations yet."));
  };

  void showHealth();
  void showTools();
  void showList();
}
