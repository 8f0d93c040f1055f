import { cleanup, fireEvent, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import { renderIn, trace } from "../../test/render";
import { KEPT_PAGE, TraceInspector } from "./TraceInspector";

afterEach(cleanup);

describe("TraceInspector", () => {
  it("shows the raw JSON-RPC and re-runs the call with edited arguments", async () => {
    const getTrace = vi.fn(() =>
      Promise.resolve({
        call_id: "c1",
        server: "files",
        tool: "read_file",
        request: { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "read_file" } },
        response: { jsonrpc: "2.0", id: 7, result: { content: [] } },
      }),
    );
    const callTool = vi.fn(() => Promise.resolve({ content: [{ type: "text" as const, text: "second run" }], structured_content: null, is_error: false }));
    renderIn(<TraceInspector trace={trace({ status: "done" })} getTrace={getTrace} callTool={callTool} onClose={() => undefined} />);
    expect((await screen.findByText(/"method": "tools\/call"/)).getAttribute("data-testid")).toBe("inspector-request");
    expect(screen.getByTestId("inspector-response").textContent).toContain('"id": 7');
    fireEvent.change(screen.getByTestId("inspector-args"), { target: { value: '{"path": "/tmp/b.txt"}' } });
    fireEvent.click(screen.getByTestId("inspector-run"));
    expect(callTool).toHaveBeenCalledWith("files", "read_file", { path: "/tmp/b.txt" });
    expect(await screen.findByText("second run")).toBeTruthy();
  });

  it("refuses invalid JSON arguments with a readable message", async () => {
    const callTool = vi.fn();
    renderIn(
      <TraceInspector trace={trace()} getTrace={() => new Promise(() => undefined)} callTool={callTool} onClose={() => undefined} />,
    );
    fireEvent.change(screen.getByTestId("inspector-args"), { target: { value: "{path:" } });
    fireEvent.click(screen.getByTestId("inspector-run"));
    expect(callTool).not.toHaveBeenCalled();
    expect((await screen.findByRole("alert")).textContent).toContain("The arguments are not valid JSON");
  });

  it("closes on Escape", () => {
    const onClose = vi.fn();
    renderIn(<TraceInspector trace={trace()} getTrace={() => new Promise(() => undefined)} callTool={vi.fn()} onClose={onClose} />);
    fireEvent.keyDown(screen.getByRole("dialog"), { key: "Escape" });
    expect(onClose).toHaveBeenCalled();
  });
  it("reads the whole of a cut result a page at a time", async () => {
    const whole = "é".repeat(KEPT_PAGE) + "the end";
    const readKept = vi.fn((_result: number, offset: number, length: number) =>
      Promise.resolve({
        kept: { result: 3, chars: KEPT_PAGE + 7, lines: 1, sent_chars: 100 },
        offset,
        text: [...whole].slice(offset, offset + length).join(""),
      }),
    );
    const cut = trace({
      status: "done",
      result: { content: [], structured_content: null, is_error: false, kept: { result: 3, chars: KEPT_PAGE + 7, lines: 1, sent_chars: 100 } },
    });
    renderIn(<TraceInspector trace={cut} getTrace={() => new Promise(() => undefined)} callTool={vi.fn()} readKept={readKept} onClose={() => undefined} />);
    await waitFor(() => expect(screen.getByTestId("inspector-kept-text").textContent?.length).toBe(KEPT_PAGE));
    expect(readKept).toHaveBeenCalledWith(3, 0, KEPT_PAGE);
    fireEvent.click(screen.getByTestId("inspector-kept-more"));
    await waitFor(() => expect(screen.getByTestId("inspector-kept-text").textContent?.endsWith("é".repeat(3) + "the end")).toBe(true));
    expect(readKept).toHaveBeenLastCalledWith(3, KEPT_PAGE, KEPT_PAGE);
    expect(screen.queryByTestId("inspector-kept-more")).toBeNull();
  });

  it("offers no second page before the first has come", () => {
    const cut = trace({
      status: "done",
      result: { content: [], structured_content: null, is_error: false, kept: { result: 1, chars: 10, lines: 1, sent_chars: 1 } },
    });
    const readKept = vi.fn(() => new Promise<never>(() => undefined));
    renderIn(<TraceInspector trace={cut} getTrace={() => new Promise(() => undefined)} callTool={vi.fn()} readKept={readKept} onClose={() => undefined} />);
    expect((screen.getByTestId("inspector-kept-more") as HTMLButtonElement).disabled).toBe(true);
    fireEvent.click(screen.getByTestId("inspector-kept-more"));
    expect(readKept).toHaveBeenCalledTimes(1);
  });

  it("has no whole-result section for a result sent whole", () => {
    renderIn(<TraceInspector trace={trace({ status: "done" })} getTrace={() => new Promise(() => undefined)} callTool={vi.fn()} readKept={vi.fn()} onClose={() => undefined} />);
    expect(screen.queryByTestId("inspector-kept")).toBeNull();
  });
});
