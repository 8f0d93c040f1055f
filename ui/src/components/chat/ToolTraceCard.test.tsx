import { cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { ResourceReader } from "../../lib/resources";
import { ToolCatalogue, toolMap } from "../../lib/toolCatalogue";
import { renderIn, toolInfo, trace } from "../../test/render";
import { ToolTraceCard, ToolTraceGroup, WRITING_TAIL, formatDuration } from "./ToolTraceCard";
import { resultText } from "./ToolResultView";
import { expectAccessible } from "../../test/axe";

afterEach(cleanup);

describe("ToolTraceCard", () => {
  it("shows the icon of the tool it called, from the chat page's tools", () => {
    const png = "data:image/png;base64,iVBORw0KGgo=";
    const icons = toolMap([toolInfo("fs", "read", { icons: [{ src: png, theme: null }] }), toolInfo("fs", "write")]);
    const { container } = renderIn(
      <ToolCatalogue.Provider value={icons}>
        <ToolTraceCard trace={trace({ server: "fs", tool: "read" })} />
        <ToolTraceCard trace={trace({ server: "fs", tool: "write" })} />
      </ToolCatalogue.Provider>,
    );
    const [read, write] = container.querySelectorAll("[data-testid=trace-card]");
    expect(read!.querySelector("img.mcp-icon")?.getAttribute("src")).toBe(png);
    expect(write!.querySelector("img.mcp-icon")).toBeNull();
  });

  it("shows a call the model is still writing: the end of its arguments so far", () => {
    const long = `{"text": "${"a".repeat(3000)}b`;
    const { container } = renderIn(<ToolTraceCard trace={trace({ status: "writing", arguments: null, arguments_text: long })} />);
    expect(screen.getByTestId("trace-status").textContent).toBe("Writing…");
    expect(container.querySelector(".spin")).toBeTruthy();
    const shown = screen.getByTestId("trace-args-writing").textContent ?? "";
    expect(shown).toBe(`…${long.slice(-WRITING_TAIL)}`);
    expect(shown.endsWith("aab")).toBe(true);
    expect(screen.queryByTestId("trace-args")).toBeNull();
  });

  it("shows a running call with a spinner and a progress bar", () => {
    const { container } = renderIn(
      <ToolTraceCard trace={trace({ status: "running", progress: { progress: 3, total: 4, message: "indexing" } })} />,
    );
    expect(screen.getByTestId("trace-status").textContent).toBe("Running");
    expect(container.querySelector(".spin")).toBeTruthy();
    const bar = screen.getByTestId("trace-progress") as HTMLProgressElement;
    expect(bar.value).toBe(3);
    expect(bar.max).toBe(4);
    expect(screen.getByText("75% · indexing")).toBeTruthy();
    expect(screen.queryByTestId("trace-duration")).toBeNull();
  });

  it("shows a finished call: duration, arguments, markdown, image, resource link, structured JSON, logs", async () => {
    renderIn(
      <ToolTraceCard
        trace={trace({
          status: "done",
          duration_ms: 1532,
          logs: [{ level: "info", message: "opened file" }],
          result: {
            content: [
              { type: "text", text: "**bold** result" },
              { type: "image", mime_type: "image/png", data: "AAAA" },
              { type: "resource_link", uri: "file:///tmp/a.txt", name: "a.txt", mime_type: null },
            ],
            structured_content: { lines: 3 },
            is_error: false,
          },
        })}
      />,
    );
    expect(screen.getByTestId("trace-status").textContent).toBe("Done");
    expect(screen.getByTestId("trace-duration").textContent).toBe("1.53 s");
    // One line until opened.
    const toggle = screen.getByRole("button", { name: /files · read_file/ });
    expect([toggle.getAttribute("aria-expanded"), screen.queryByTestId("trace-args")]).toEqual(["false", null]);
    expect(screen.getByTestId("trace-body").hidden).toBe(true);
    fireEvent.click(toggle);
    expect(toggle.getAttribute("aria-expanded")).toBe("true");
    expect(screen.getByTestId("trace-args").textContent).toBe('{\n  "path": "/tmp/a.txt"\n}');
    expect((await screen.findByText("bold", {}, { timeout: 15_000 })).tagName).toBe("STRONG");
    expect((screen.getByRole("img", { name: "Image returned by the tool" }) as HTMLImageElement).src).toBe("data:image/png;base64,AAAA");
    // Alone, with nothing to read it through, a resource link is its name.
    expect(screen.getByTitle("file:///tmp/a.txt").textContent).toBe("a.txt");
    expect(screen.queryByRole("link", { name: "a.txt" })).toBeNull();
    expect(screen.getByText(/"lines": 3/)).toBeTruthy();
    expect(screen.getByText("Log messages (1)")).toBeTruthy();
    // Its text goes to the clipboard: text, then resource links; the picture is left out.
    const writeText = vi.fn(() => Promise.resolve());
    Object.defineProperty(navigator, "clipboard", { value: { writeText }, configurable: true });
    fireEvent.click(screen.getByTestId("trace-copy"));
    expect(writeText).toHaveBeenCalledWith("**bold** result\n\na.txt <file:///tmp/a.txt>");
    await waitFor(() => expect(screen.getByTestId("trace-copy").getAttribute("aria-label")).toBe("Copied"));
    Object.defineProperty(navigator, "clipboard", { value: undefined, configurable: true });
  });

  it("copies structured content as JSON when a result has no text", () => {
    expect(resultText({ content: [{ type: "image", mime_type: "image/png", data: "AAAA" }], structured_content: { sum: 42 }, is_error: false })).toBe(
      '{\n  "sum": 42\n}',
    );
    expect(resultText({ content: [], structured_content: null, is_error: false })).toBe("");
  });

  it("reads a resource a result links to from the server that gave it, and opens a web page as a link", async () => {
    const read = vi.fn((server: string, uri: string) =>
      uri.endsWith("gone")
        ? Promise.reject({ kind: "mcp", message: `MCP server "${server}" returned error -32002: resource not found` })
        : Promise.resolve([{ uri, mime_type: "text/plain", text: `notes from ${server}`, blob: null, size: 14, truncated: false }]),
    );
    renderIn(
      <ResourceReader.Provider value={read}>
        <ToolTraceCard
          trace={trace({
            server: "notes",
            status: "done",
            result: {
              content: [
                { type: "resource_link", uri: "notes://today", name: "Today", mime_type: "text/plain" },
                { type: "resource_link", uri: "notes://gone", name: "Gone", mime_type: null },
                { type: "resource_link", uri: "https://example.com/doc", name: "The doc", mime_type: null },
              ],
              structured_content: null,
              is_error: false,
            },
          })}
        />
      </ResourceReader.Provider>,
    );
    fireEvent.click(screen.getByTestId("trace-toggle"));
    expect(screen.getByRole("link", { name: "The doc" }).getAttribute("href")).toBe("https://example.com/doc");
    const today = screen.getByRole("button", { name: "Today" });
    fireEvent.click(today);
    // A second click while it reads does not close what is about to open.
    fireEvent.click(today);
    expect(read).toHaveBeenCalledTimes(1);
    expect(read).toHaveBeenCalledWith("notes", "notes://today");
    expect((await screen.findByTestId("resource-preview")).textContent).toContain("notes from notes");
    expect(today.getAttribute("aria-expanded")).toBe("true");
    fireEvent.click(today);
    expect(screen.queryByTestId("resource-preview")).toBeNull();
    fireEvent.click(screen.getByRole("button", { name: "Gone" }));
    expect((await screen.findByRole("alert")).textContent).toContain("resource not found");
  });

  it("shows a failed call with the server's stderr tail", () => {
    renderIn(<ToolTraceCard trace={trace({ status: "error", error: "server exited with code 1", stderr_tail: "Error: ENOENT", duration_ms: 12 })} />);
    const alert = screen.getByRole("alert");
    expect(alert.textContent).toContain("server exited with code 1");
    expect(screen.getByTestId("trace-stderr").textContent).toBe("Error: ENOENT");
    expect(screen.getByTestId("trace-duration").textContent).toBe("12 ms");
  });

  it("marks an isError result", () => {
    renderIn(
      <ToolTraceCard trace={trace({ status: "error", result: { content: [{ type: "text", text: "no such file" }], structured_content: null, is_error: true } })} />,
    );
    // Open from the start: what went wrong is in view.
    expect(screen.getByText("The tool reported an error.")).toBeTruthy();
    expect(screen.getByTestId("tool-result").className).toContain("is-error");
  });

  it("asks for approval with the full arguments and reports the decision", async () => {
    const onDecide = vi.fn();
    renderIn(<ToolTraceCard trace={trace({ status: "pending_approval", arguments: { path: "/etc/hosts", lines: [1, 2] } })} onDecide={onDecide} />);
    const card = screen.getByTestId("approval-card");
    await expectAccessible();
    expect(within(card).getByTestId("approval-args").textContent).toContain('"/etc/hosts"');
    expect(within(card).queryByTestId("approval-strict")).toBeNull();
    fireEvent.click(within(card).getByRole("button", { name: "Allow for this conversation" }));
    fireEvent.click(within(card).getByRole("button", { name: "Always allow this tool" }));
    fireEvent.click(within(card).getByRole("button", { name: "Deny" }));
    fireEvent.click(within(card).getByRole("button", { name: "Allow once" }));
    expect(onDecide.mock.calls).toEqual([
      ["c1", "allow_conversation"],
      ["c1", "allow_always"],
      ["c1", "deny"],
      ["c1", "allow_once"],
    ]);
  });

  it("offers only allow once and deny for a strict server's call, and says why", () => {
    const onDecide = vi.fn();
    renderIn(<ToolTraceCard trace={trace({ status: "pending_approval", strict: true })} onDecide={onDecide} />);
    const card = screen.getByTestId("approval-card");
    expect(within(card).getByTestId("approval-strict").textContent).toBe("files runs at the strict level: every call is asked.");
    expect(within(card).queryByTestId("approve-conversation")).toBeNull();
    expect(within(card).queryByTestId("approve-always")).toBeNull();
    expect(within(card).getAllByRole("button").map((b) => b.textContent)).toEqual(["Allow once", "Deny"]);
    fireEvent.click(within(card).getByRole("button", { name: "Allow once" }));
    expect(onDecide.mock.calls).toEqual([["c1", "allow_once"]]);
  });

  it("says in the approval what the tool is for and what its server says it does", () => {
    const tools = toolMap([toolInfo("files", "read_file", { title: "Tidy up", description: "Deletes old files", hints: ["destructive", "idempotent"] })]);
    renderIn(
      <ToolCatalogue.Provider value={tools}>
        <ToolTraceCard trace={trace({ status: "pending_approval" })} onDecide={vi.fn()} />
      </ToolCatalogue.Provider>,
    );
    const card = screen.getByTestId("approval-card");
    // The tool by the title its server gives it, and the name the model called.
    expect(card.textContent).toContain("Allow files to run Tidy up (read_file) with these arguments?");
    expect(screen.getByTestId("trace-card").querySelector("strong")?.textContent).toBe("Tidy up");
    expect(card.textContent).toContain("Deletes old files");
    expect(within(card).getByTestId("approval-hints").textContent).toBe("files says this tool: may delete or overwritesafe to repeat");
    expect(card.querySelector(".hint-destructive")).toBeTruthy();
    expect(within(card).getByTestId("approval-destructive").textContent).toContain("without asking you");
  });

  it("shows cancelled and denied states", () => {
    renderIn(<ToolTraceGroup traces={[trace({ call_id: "a", status: "cancelled" }), trace({ call_id: "b", status: "denied" })]} />);
    expect(screen.getAllByTestId("trace-status").map((e) => e.textContent)).toEqual(["Cancelled", "Denied"]);
  });

  it("groups the calls of one step in call order, saying how many and how long the step took", () => {
    const { rerender } = renderIn(
      <ToolTraceGroup traces={[trace({ call_id: "1", tool: "first", duration_ms: 1200 }), trace({ call_id: "2", tool: "second", status: "running", duration_ms: null })]} />,
    );
    const group = screen.getByTestId("trace-group");
    expect(screen.getByTestId("trace-group-head").textContent).toBe("2 tool calls");
    rerender(<ToolTraceGroup traces={[trace({ call_id: "1", tool: "first", duration_ms: 1200 }), trace({ call_id: "2", tool: "second", duration_ms: 300 })]} />);
    expect(screen.getByTestId("trace-group-head").textContent).toBe("2 tool calls · 1.20 s");
    expect(within(group).getAllByTestId("trace-card").map((c) => c.querySelector("strong")?.textContent)).toEqual(["first", "second"]);
  });

  it("formats durations", () => {
    expect(formatDuration(999)).toBe("999 ms");
    expect(formatDuration(12_345)).toBe("12.3 s");
  });
  it("shows both sizes of a result cut for the model and opens the whole of it", () => {
    const onInspect = vi.fn();
    const cut = trace({
      status: "done",
      result: {
        content: [{ type: "text", text: "line 1\n\n[Result 1 was cut to fit the context window]" }],
        structured_content: null,
        is_error: false,
        kept: { result: 1, chars: 2_000_000, lines: 40_000, sent_chars: 13_500 },
      },
    });
    renderIn(<ToolTraceCard trace={cut} onInspect={onInspect} />);
    fireEvent.click(screen.getByTestId("trace-toggle"));
    const sizes = screen.getByTestId("trace-sizes").textContent ?? "";
    expect(sizes).toContain((13_500).toLocaleString());
    expect(sizes).toContain((2_000_000).toLocaleString());
    fireEvent.click(screen.getByTestId("trace-whole"));
    expect(onInspect).toHaveBeenCalledWith(cut);
  });

  it("shows no sizes for a result sent whole", () => {
    renderIn(<ToolTraceCard trace={trace({ status: "done", result: { content: [{ type: "text", text: "ok" }], structured_content: null, is_error: false } })} />);
    fireEvent.click(screen.getByTestId("trace-toggle"));
    expect(screen.queryByTestId("trace-sizes")).toBeNull();
  });
});
