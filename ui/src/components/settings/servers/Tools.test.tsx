// A server's tools tab: stats and approval, and testing a tool (its progress,
// calling it off, its view).
import { act, cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { CallEvent, ToolResult } from "../../../lib/ipc";
import { renderIn, signalOf, untilCancelled } from "../../../test/render";
import { tool, fake, view } from "../../../test/fakeServers";
import { ServersSettings } from "./ServersSettings";

afterEach(cleanup);

describe("ServersSettings", () => {
  it("shows tools with stats, sets approval, and tests a tool through a generated form", async () => {
    const f = fake([view("ready")]);
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "files" }));
    expect((await screen.findByTestId("tool-stats")).textContent).toBe("12 calls · 75% ok · median 40 ms");
    expect([...screen.getByTestId("tools-table").querySelectorAll("[data-hint]")].map((h) => h.textContent)).toEqual([
      "only reads",
      "reaches outside (the web, other systems)",
    ]);
    fireEvent.change(screen.getByLabelText("Approval for read_file"), { target: { value: "allow" } });
    await waitFor(() => expect(f.ipc.setToolApproval).toHaveBeenCalledWith("files", "read_file", "allow"));
    const pin = screen.getByLabelText("Pin read_file") as HTMLInputElement;
    expect(pin.checked).toBe(false);
    fireEvent.click(pin);
    await waitFor(() => expect(f.ipc.setToolPinned).toHaveBeenCalledWith("files", "read_file", true));
    fireEvent.click(screen.getByRole("button", { name: "Test" }));
    const form = screen.getByTestId("test-tool");
    fireEvent.change(within(form).getByLabelText("path *"), { target: { value: "/tmp/a" } });
    fireEvent.click(within(form).getByRole("button", { name: "Run" }));
    expect(f.ipc.callTool).toHaveBeenCalledWith("files", "read_file", { path: "/tmp/a" }, expect.any(AbortSignal), expect.any(Function));
    expect(await screen.findByText("hello from file")).toBeTruthy();
    // A tested call counts: once it ends, the tools (and their statistics) are read again.
    const reads = (f.ipc.listTools as ReturnType<typeof vi.fn>).mock.calls.length;
    fireEvent.click(within(form).getByRole("button", { name: "Run" }));
    await waitFor(() => expect((f.ipc.listTools as ReturnType<typeof vi.fn>).mock.calls.length).toBe(reads + 1));
  });

  it("shows a tested tool's latest progress while it runs, and none once it answered", async () => {
    const f = fake([view("ready")]);
    let report: (e: CallEvent) => void = () => undefined;
    let answer: (r: ToolResult) => void = () => undefined;
    f.ipc.callTool = vi.fn((_s: string, _t: string, _a: unknown, _signal?: AbortSignal, onEvent?: (e: CallEvent) => void) => {
      report = onEvent!;
      return new Promise<ToolResult>((r) => (answer = r));
    });
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "files" }));
    fireEvent.click(await screen.findByRole("button", { name: "Test" }));
    const form = screen.getByTestId("test-tool");
    fireEvent.change(within(form).getByLabelText("path *"), { target: { value: "/tmp/a" } });
    fireEvent.click(within(form).getByRole("button", { name: "Run" }));
    expect(within(form).queryByTestId("trace-progress")).toBeNull();
    act(() => report({ kind: "progress", progress: 1, total: null, message: "Gathering sources..." }));
    act(() => report({ kind: "log", level: "info", logger: null, data: "not progress" }));
    act(() => report({ kind: "progress", progress: 2, total: 4, message: "Analyzing content..." }));
    expect(within(form).getByTestId("trace-progress")).toBeTruthy();
    expect(within(form).getByText("50% · Analyzing content...")).toBeTruthy();
    await act(async () => answer({ content: [{ type: "text", text: "the report" }], structured_content: null, is_error: false }));
    expect(await within(form).findByText("the report")).toBeTruthy();
    expect(within(form).queryByTestId("trace-progress")).toBeNull();
  });

  it("calls a tool test off on Cancel, and when the test is closed while it runs", async () => {
    const f = fake([view("ready")]);
    f.ipc.callTool = vi.fn(untilCancelled);
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "files" }));
    const run = async () => {
      fireEvent.click(await screen.findByRole("button", { name: "Test" }));
      const form = screen.getByTestId("test-tool");
      fireEvent.change(within(form).getByLabelText("path *"), { target: { value: "/tmp/a" } });
      fireEvent.click(within(form).getByRole("button", { name: "Run" }));
      expect(within(form).getByRole("button", { name: "Running…" })).toBeTruthy();
      return form;
    };
    const form = await run();
    fireEvent.click(within(form).getByTestId("form-cancel"));
    expect(signalOf(f.ipc.callTool as never).aborted).toBe(true);
    expect((await within(form).findByTestId("test-tool-cancelled")).textContent).toBe("The call was cancelled; its server was told to stop.");
    expect(within(form).getByRole("button", { name: "Run" })).toBeTruthy();
    expect(within(form).queryByTestId("form-cancel")).toBeNull();
    // Closed while running: called off too.
    fireEvent.click(screen.getByRole("button", { name: "Test" }));
    await run();
    const second = signalOf(f.ipc.callTool as never);
    expect(second.aborted).toBe(false);
    fireEvent.click(screen.getByRole("button", { name: "Test" }));
    expect(screen.queryByTestId("test-tool")).toBeNull();
    expect(second.aborted).toBe(true);
  });

  it("shows a tested tool's view with its result, as a chat does", async () => {
    const f = fake([view("ready")]);
    f.ipc.listTools = vi.fn(() => Promise.resolve([{ ...tool, view: { resource_uri: "ui://files/view.html", for_model: true, for_app: true } }]));
    renderIn(<ServersSettings ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "files" }));
    expect((await screen.findByTestId("tool-has-view")).textContent).toBe("view");
    fireEvent.click(screen.getByRole("button", { name: "Test" }));
    const form = screen.getByTestId("test-tool");
    fireEvent.change(within(form).getByLabelText("path *"), { target: { value: "/tmp/a" } });
    fireEvent.click(within(form).getByRole("button", { name: "Run" }));
    const frame = await within(form).findByTestId("app-view-frame");
    expect(f.ipc.openAppView).toHaveBeenCalledWith("files", "ui://files/view.html", expect.any(AbortSignal));
    // The page loads once the card listens for it.
    await waitFor(() => expect(frame.getAttribute("src")).toBe("mcp-app://localhost/t1"));
    expect(within(form).getByText("hello from file")).toBeTruthy();
  });
});
