import { cleanup, render } from "@testing-library/react";
import { afterEach, describe, expect, it } from "vitest";
import { Marked } from "./Marked";

afterEach(cleanup);

const marked = (text: string, marks: [number, number][]) => {
  const { container } = render(<Marked text={text} marks={marks} />);
  return { text: container.textContent, marks: [...container.querySelectorAll("mark")].map((m) => m.textContent) };
};

describe("Marked", () => {
  it("marks ranges counted in UTF-16 units, after an emoji too", () => {
    expect(marked("😀 工具审批 run", [[3, 5], [8, 11]])).toEqual({ text: "😀 工具审批 run", marks: ["工具", "run"] });
  });

  it("keeps the whole text when a range is out of order or past the end", () => {
    expect(marked("tool approval", [[5, 13], [0, 4], [10, 99]])).toEqual({ text: "tool approval", marks: ["approval"] });
  });
});
