import { describe, expect, it } from "vitest";
import { spoken } from "./Announcer";

describe("spoken", () => {
  it("reads an answer's Markdown as words, without marks, fences, pipes or link targets", () => {
    const answer = [
      "## Result",
      "",
      "The **sum** is `5`; see [the docs](https://example.com/sum) and ![a chart](chart.png).",
      "",
      "```rust",
      "let x = 5;",
      "```",
      "",
      "| a | b |",
      "|---|:-:|",
      "| 1 | 2 |",
      "",
      "- first",
      "1. second",
      "> quoted",
    ].join("\n");
    expect(spoken(answer)).toBe("Result The sum is 5 ; see the docs and a chart. let x = 5; a b 1 2 first second quoted");
  });

  it("cuts a long answer short", () => {
    const said = spoken("word ".repeat(200));
    expect(said.length).toBeLessThanOrEqual(401);
    expect(said.endsWith("…")).toBe(true);
    expect(spoken("short")).toBe("short");
  });
});
