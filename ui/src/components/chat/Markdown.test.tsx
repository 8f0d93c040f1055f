import { act, cleanup, fireEvent, screen } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { renderIn } from "../../test/render";
import { Markdown, splitBlocks } from "./Markdown";

afterEach(cleanup);

describe("splitBlocks", () => {
  it("splits at blank lines but never inside a fenced code block", () => {
    const text = "# Title\n\npara one\nstill one\n\n```py\nx = 1\n\ny = 2\n```\n\n- a\n- b";
    expect(splitBlocks(text)).toEqual(["# Title", "para one\nstill one", "```py\nx = 1\n\ny = 2\n```", "- a\n- b"]);
  });

  it("keeps a list item's indented continuation in the list's block", () => {
    expect(splitBlocks("1. Step\n\n   More about it.\n\n2. Next\n\nAfter")).toEqual([
      "1. Step\n\n   More about it.",
      "2. Next",
      "After",
    ]);
  });

  it("keeps an unterminated fence (still streaming) as one block", () => {
    expect(splitBlocks("intro\n\n```js\nlet a;\n\nlet b")).toEqual(["intro", "```js\nlet a;\n\nlet b"]);
  });
});

describe("Markdown", () => {
  it("renders GFM tables, lists and links", () => {
    const { container } = renderIn(
      <Markdown text={"| a | b |\n|---|---|\n| 1 | 2 |\n\n- one\n- two\n\n[site](https://example.com) ~~old~~"} />,
    );
    expect(container.querySelectorAll("table td")).toHaveLength(2);
    expect(container.querySelectorAll("ul li")).toHaveLength(2);
    const link = screen.getByRole("link", { name: "site" });
    expect(link.getAttribute("href")).toBe("https://example.com");
    expect(link.getAttribute("rel")).toContain("noopener");
    expect(container.querySelector("del")?.textContent).toBe("old");
  });

  it("shows a link to a file or a script as its text, not as a link", () => {
    const { container } = renderIn(<Markdown text={"[passwords](file:///etc/passwd) and [run](javascript:alert(1)) and [mail](mailto:a@example.com)"} />);
    expect(screen.getAllByRole("link").map((a) => a.textContent)).toEqual(["mail"]);
    const unopened = [...container.querySelectorAll("[data-testid=unopened-link]")];
    expect(unopened.map((x) => [x.textContent, x.getAttribute("title")])).toEqual([
      ["passwords", "Not a web or mail link: Patchbay does not open it."],
      ["run", "Not a web or mail link: Patchbay does not open it."],
    ]);
  });

  it("typesets TeX inline and on its own lines, and shows a formula it cannot read as its source", () => {
    const { container } = renderIn(<Markdown text={"Inline \\(a^2 + b^2\\), a price of $5, and\n\n$$\n\\frac{1}{2}\n$$\n\nbad $\\frac{1$ end"} />);
    expect(container.querySelectorAll(".katex")).toHaveLength(2);
    expect(container.querySelectorAll(".katex-display")).toHaveLength(1);
    expect(container.querySelector(".katex-display annotation")?.textContent).toBe("\\frac{1}{2}");
    expect(container.textContent).toContain("a price of $5");
    expect(container.querySelector(".katex-error")?.textContent).toBe("\\frac{1");
  });

  it("keeps a display formula whole while it streams", () => {
    expect(splitBlocks("a\n\n$$\nx\n\ny\n$$\n\nb")).toEqual(["a", "$$\nx\n\ny\n$$", "b"]);
  });

  it("leaves [n] as text unless citations are wired, and never inside code", () => {
    const { container, rerender } = renderIn(<Markdown text={"See [2] and `a[1]`."} />);
    expect(container.querySelector("[data-testid=cite-marker]")).toBeNull();
    const onCite = vi.fn();
    rerender(<Markdown text={"See [2] and `a[1]`."} onCite={onCite} />);
    const markers = screen.getAllByTestId("cite-marker");
    expect(markers.map((m) => m.textContent)).toEqual(["[2]"]);
    fireEvent.click(markers[0] as HTMLElement);
    expect(onCite).toHaveBeenCalledWith(2);
  });

  it("highlights fenced code and copies it", async () => {
    const writeText = vi.fn(() => Promise.resolve());
    Object.assign(navigator, { clipboard: { writeText } });
    const { container } = renderIn(<Markdown text={"```rust\nfn main() { let x = 1; }\n```"} />);
    expect(container.querySelector(".code-lang")?.textContent).toBe("rust");
    expect(container.querySelector("code .hljs-keyword")?.textContent).toBe("fn");
    fireEvent.click(screen.getByTestId("code-copy"));
    expect(writeText).toHaveBeenCalledWith("fn main() { let x = 1; }");
    expect(await screen.findByRole("button", { name: "Copied" })).toBeTruthy();
  });

  it("streams without replacing blocks that are already complete", () => {
    const chunks = ["# Plan", "\n\nFirst para", "graph ends.\n\n", "| x |\n|---|\n| 1", " |\n\n```ts\nconst a", " = 1;\n```"];
    let text = "";
    const { container, rerender } = renderIn(<Markdown text={text} streaming />);
    const seen: Element[] = [];
    for (const c of chunks) {
      text += c;
      act(() => rerender(<Markdown text={text} streaming />));
      const heading = container.querySelector("h1");
      if (heading) seen.push(heading);
    }
    // The heading node rendered by the first chunk is the very same node at the end.
    expect(new Set(seen).size).toBe(1);
    expect(container.querySelector("h1")?.textContent).toBe("Plan");
    expect(container.querySelector("table")).toBeTruthy();
    expect(container.querySelector(".code-lang")?.textContent).toBe("ts");
    // Settled, the same text is one block, rendered alike.
    act(() => rerender(<Markdown text={text} />));
    expect(container.querySelectorAll(".md-block")).toHaveLength(1);
    expect(container.querySelector("h1")?.textContent).toBe("Plan");
    expect(container.querySelector("table")).toBeTruthy();
    expect(container.querySelector(".code-lang")?.textContent).toBe("ts");
  });
});
