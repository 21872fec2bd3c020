/**
 * The terminal chat's status line (a retry notice) on a TTY: shown under the reply,
 * replaced in place by the next one, kept under the reply while it is redrawn, and
 * gone once the final answer lands. Checked on the screen a terminal would show.
 */
import { describe, expect, it } from "vitest";
import {
  createTerminalReplyPortFactory,
  inputEchoed,
  showStatus,
  type TerminalScreen,
} from "../../../src/bots/terminal/terminal-reply-port.js";

/** A tiny VT100: applies "\n", "\r", cursor-up (ESC[nA) and erase-below (ESC[J) to a list of rows. */
function fakeTerminal(): { screen: TerminalScreen; rows(): string[] } {
  const rows: string[] = [""];
  let row = 0;
  const write = (text: string) => {
    for (const token of text.match(/\x1b\[\d*[AJ]|\r|\n|[^\x1b\r\n]+/g) ?? []) {
      if (token === "\n") {
        row++;
        if (rows.length <= row) rows.push("");
      } else if (token === "\r") continue;
      else if (token.endsWith("A")) row = Math.max(0, row - Number(token.slice(2, -1) || 1));
      else if (token.endsWith("J")) {
        rows.splice(row + 1);
        rows[row] = "";
      } else rows[row] = (rows[row] ?? "") + token;
    }
  };
  return {
    screen: { out: { write, isTTY: true, columns: 80 }, nextId: 1 },
    rows: () => rows.filter((r, i) => r !== "" || i < rows.length - 1),
  };
}

describe("terminal status line", () => {
  it("replaces itself in place, stays under the reply while it streams, and goes when the answer is final", async () => {
    const term = fakeTerminal();
    const port = createTerminalReplyPortFactory(term.screen)({} as never);
    const id = await port.send({ text: "…" }, {});
    showStatus(term.screen, "⏳ retrying, attempt 2 of 4…");
    showStatus(term.screen, "⏳ retrying, attempt 3 of 4…");
    expect(term.rows()).toEqual(["🤖 …", "⏳ retrying, attempt 3 of 4…"]);
    await port.edit(id, { text: "Back" }, {});
    expect(term.rows()).toEqual(["🤖 Back", "⏳ retrying, attempt 3 of 4…"]);
    await port.edit(id, { text: "Back again." }, { final: true });
    expect(term.rows()).toEqual(["🤖 Back again."]);
  });

  it("never draws over a line typed while the answer streams, and a final edit with the text already shown redraws nothing", async () => {
    const term = fakeTerminal();
    const port = createTerminalReplyPortFactory(term.screen)({} as never);
    const id = await port.send({ text: "✅ get_time(Asia/Shanghai)" }, {});
    await port.edit(id, { text: "✅ get_time(Asia/Shanghai)\n\nIt is 15:04." }, {});
    // The user types the next question; the terminal echoes it under the answer.
    term.screen.out.write("and in Paris?\n");
    inputEchoed(term.screen);
    await port.edit(id, { text: "✅ get_time(Asia/Shanghai)\n\nIt is 15:04." }, { final: true });
    expect(term.rows()).toEqual(["🤖 ✅ get_time(Asia/Shanghai)", "", "It is 15:04.", "and in Paris?"]);
  });
});
