import { describe, expect, it } from "vitest";
import { spoken } from "./Announcer";

describe("spoken", () => {
  it("reads an answer's Markdown as words, without marks, fences, rules, pipes or link targets", () => {
    const answer = [
      "## Result",
      "",
      "The **sum** is `5`; see [the docs](https://example.com/sum) and ![a chart](chart.png).",
      "",
      "```rust",
      "let x = 5;",
      "```",
      "---",
      "| a | b |",
      "|---|:-:|",
      "| 1 | 2 |",
      "",
      "- first",
      "1. second",
      "> > quoted",
    ].join("\n");
    expect(spoken(answer)).toBe("Result The sum is 5; see the docs and a chart. let x = 5; a b 1 2 first second quoted");
  });

  it("keeps what only looks like a mark: arithmetic, identifiers, a tilde, a number sign, a link with parentheses", () => {
    expect(spoken("3 * 4 = 12, 2 ** 10, *really*, via get_sum, ~5 ms: [wiki](https://e.org/A_(b)).")).toBe(
      "3 * 4 = 12, 2 ** 10, really, via get_sum, ~5 ms: wiki.",
    );
    expect(spoken("#1 priority, __bold__ and ~~gone~~")).toBe("#1 priority, bold and gone");
  });

  it("drops emphasis beside Chinese text and full-width punctuation, and a fence in a list item", () => {
    expect(spoken("这是*重要*的。（*注*）**加粗**")).toBe("这是重要的。（注）加粗");
    expect(spoken("- step:\n    ```bash\n    ls\n    ```")).toBe("step: ls");
  });

  it("cuts a long answer short, between whole characters", () => {
    const said = spoken("word ".repeat(200));
    expect(Array.from(said).length).toBeLessThanOrEqual(401);
    expect(said.endsWith("…")).toBe(true);
    const emoji = Array.from(spoken("😀".repeat(500)));
    expect(emoji.slice(0, -1).every((c) => c === "😀")).toBe(true);
    // A thumb with a skin tone is one character: never cut between its two code points.
    const thumbs = spoken("👍🏽".repeat(450));
    expect(thumbs.endsWith("👍🏽…")).toBe(true);
    expect(spoken("short")).toBe("short");
  });
});
