import { cleanup, fireEvent, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { renderIn } from "../../test/render";

// Mermaid needs a real layout engine (jsdom has none): the window's e2e test draws with the real one.
const mermaid = vi.hoisted(() => ({
  initialize: vi.fn(),
  render: vi.fn(async (_id: string, code: string) => {
    if (code.includes("oops")) throw new Error("Parse error on line 2");
    return { svg: `<svg data-testid="drawn"><text>${code.split("\n").length} lines</text></svg>` };
  }),
}));
vi.mock("mermaid", () => ({ default: mermaid }));

const { Markdown } = await import("./Markdown");

afterEach(() => {
  cleanup();
  mermaid.render.mockClear();
});

const answer = (body: string) => `Here it is:\n\n\`\`\`mermaid\n${body}\n\`\`\`\n\nDone.`;

describe("Mermaid diagrams in answers", () => {
  it("draws a finished answer's diagram, with its source one click away", async () => {
    renderIn(<Markdown text={answer("graph TD\n  A[Start] --> B[End]")} />);
    expect(await screen.findByTestId("drawn")).toBeTruthy();
    expect(mermaid.render).toHaveBeenCalledWith(expect.stringMatching(/^mermaid-/), "graph TD\n  A[Start] --> B[End]");
    expect(mermaid.initialize).toHaveBeenCalledWith(expect.objectContaining({ securityLevel: "strict", startOnLoad: false }));
    fireEvent.click(screen.getByTestId("mermaid-source"));
    expect(screen.getByTestId("mermaid").textContent).toContain("A[Start] --> B[End]");
    expect(screen.queryByTestId("drawn")).toBeNull();
    fireEvent.click(screen.getByTestId("mermaid-source"));
    expect(screen.getByTestId("drawn")).toBeTruthy();
  });

  it("shows the source while the answer streams, and draws once it is done", async () => {
    const { rerender } = renderIn(<Markdown text={answer("graph TD\n  A --> B")} streaming />);
    expect(screen.getByText(/A --> B/)).toBeTruthy();
    await new Promise((r) => setTimeout(r, 20));
    expect(mermaid.render).not.toHaveBeenCalled();
    rerender(<Markdown text={answer("graph TD\n  A --> B")} />);
    expect(await screen.findByTestId("drawn")).toBeTruthy();
  });

  it("says why a diagram could not be drawn, and shows its source", async () => {
    renderIn(<Markdown text={answer("graph TD\n  oops -->")} />);
    const failed = await screen.findByTestId("mermaid-error");
    expect(failed.textContent).toContain("This diagram could not be drawn: Parse error on line 2");
    expect(failed.textContent).toContain("oops -->");
  });

  it("leaves other code blocks to the highlighter", async () => {
    renderIn(<Markdown text={"```js\nconst a = 1;\n```"} />);
    await waitFor(() => expect(screen.getByText("js")).toBeTruthy());
    expect(screen.queryByTestId("mermaid")).toBeNull();
    expect(mermaid.render).not.toHaveBeenCalled();
  });
});
