import { act, cleanup, configure, fireEvent, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { AppViewInfo } from "../../lib/ipc";
import { GESTURE_MS, LiveViews, LiveViewsContext, ViewChat } from "../../lib/mcpApps";
import { ToolCatalogue, toolMap } from "../../lib/toolCatalogue";
import { renderIn, toolInfo, trace } from "../../test/render";

const invoke = vi.hoisted(() => vi.fn<(command: string, args?: Record<string, unknown>) => Promise<unknown>>());
vi.mock("@tauri-apps/api/core", () => ({ invoke, Channel: class {} }));

// A view answers through promises and the window's message events: on a busy machine (CI runs
// test files side by side on 2 cores) that can take more than the default second.
configure({ asyncUtilTimeout: 5000 });

const { ToolTraceCard } = await import("./ToolTraceCard");
const { ARM_MS } = await import("./AppView");
// The cards show results through the lazily loaded Markdown; load it once first, so that its first
// transform (seconds on a fresh clone on a busy machine) is not counted in a test's time limit.
await import("./Markdown");

afterEach(() => {
  cleanup();
  invoke.mockReset();
});

const page: AppViewInfo = {
  url: "mcp-app://localhost/abc",
  uri: "ui://counter/view.html",
  csp: { connect: [], resources: [], frames: [], base_uris: [] },
  prefers_border: null,
  clipboard_write: false,
  withheld: [],
};

const show = toolInfo("counter", "show", { view: { resource_uri: "ui://counter/view.html", for_model: true, for_app: true } });
const bump = toolInfo("counter", "bump", { approval: "ask", view: { resource_uri: null, for_model: false, for_app: true } });
const reset = toolInfo("counter", "reset", { approval: "ask", view: { resource_uri: null, for_model: true, for_app: false } });

/** The card of a finished call of `show`, its frame, and what the window posted to the frame. */
async function renderView(sendMessage = vi.fn(() => Promise.resolve()), setContext = vi.fn()) {
  invoke.mockImplementation((command) => {
    if (command === "open_app_view") return Promise.resolve(page);
    if (command === "call_tool_for_view") return Promise.resolve({ content: [{ type: "text", text: "3" }] });
    return Promise.reject(new Error(`unexpected ${command}`));
  });
  const views = new LiveViews();
  renderIn(
    <LiveViewsContext.Provider value={views}>
      <ToolCatalogue.Provider value={toolMap([show, bump, reset])}>
        <ViewChat.Provider value={{ sendMessage, setContext }}>
          <ToolTraceCard
            trace={trace({ server: "counter", tool: "show", status: "done", arguments: { start: 2 }, result: { content: [{ type: "text", text: "2" }], structured_content: null, is_error: false } })}
          />
        </ViewChat.Provider>
      </ToolCatalogue.Provider>
    </LiveViewsContext.Provider>,
  );
  return { ...(await talkToView()), sendMessage, setContext, views };
}

/** Presses a question's button once it answers: not before it has been on screen ARM_MS. */
async function press(testId: string) {
  const button = (await screen.findByTestId(testId)) as HTMLButtonElement;
  await waitFor(() => expect(button.disabled).toBe(false), { timeout: ARM_MS * 4 });
  fireEvent.click(button);
}

/** The user clicks inside the view: the focus moves into its frame, and the window loses it. */
async function clickInside(frame: HTMLIFrameElement) {
  await act(async () => {
    frame.focus();
    window.dispatchEvent(new FocusEvent("blur"));
    await new Promise((done) => setTimeout(done, 10));
  });
}

/** The view's frame once shown, what the window posts to it, and a way to post as the view. */
async function talkToView() {
  const frame = (await screen.findByTestId("app-view-frame")) as HTMLIFrameElement;
  // The frame can be found before the effect that listens to it has run: let React flush it.
  await act(() => Promise.resolve());
  const posted: Record<string, unknown>[] = [];
  vi.spyOn(frame.contentWindow!, "postMessage").mockImplementation((m: unknown) => void posted.push(m as Record<string, unknown>));
  const fromView = (data: unknown) =>
    act(async () => {
      window.dispatchEvent(new MessageEvent("message", { data, source: frame.contentWindow }));
      await Promise.resolve();
    });
  return { frame, posted, fromView };
}

describe("AppView", { timeout: 20_000 }, () => {
  it("tells the view of a tool that runs unasked the arguments as the model writes them, then the whole call", async () => {
    invoke.mockImplementation((command) => (command === "open_app_view" ? Promise.resolve(page) : Promise.reject(new Error(command))));
    const card = (extra: Parameters<typeof trace>[0]) => (
      <ToolCatalogue.Provider value={toolMap([{ ...show, approval: "allow" }])}>
        <ToolTraceCard trace={trace({ server: "counter", tool: "show", ...extra })} />
      </ToolCatalogue.Provider>
    );
    const { rerender } = renderIn(card({ status: "writing", arguments: null, arguments_text: '{"start": 4, "la' }));
    const { frame, posted, fromView } = await talkToView();
    await fromView({ jsonrpc: "2.0", id: 1, method: "ui/initialize", params: {} });
    await fromView({ jsonrpc: "2.0", method: "ui/notifications/initialized" });
    const partials = () => posted.filter((m) => m.method === "ui/notifications/tool-input-partial").map((m) => m.params);
    await waitFor(() => expect(partials()).toEqual([{ arguments: { start: 4 } }]));
    rerender(card({ status: "writing", arguments: null, arguments_text: '{"start": 4, "label": "Pet' }));
    await waitFor(() => expect(partials()).toEqual([{ arguments: { start: 4 } }, { arguments: { start: 4, label: "Pet" } }]));
    expect(posted.some((m) => m.method === "ui/notifications/tool-input")).toBe(false);
    rerender(card({ status: "running", arguments: { start: 4, label: "Pets" } }));
    expect(screen.getByTestId("app-view-frame")).toBe(frame);
    await waitFor(() => expect(posted).toContainEqual({ jsonrpc: "2.0", method: "ui/notifications/tool-input", params: { arguments: { start: 4, label: "Pets" } } }));
  });

  it("tells the view of a call the user is to allow nothing of its arguments before they allow it", async () => {
    invoke.mockImplementation((command) => (command === "open_app_view" ? Promise.resolve(page) : Promise.reject(new Error(command))));
    const card = (extra: Parameters<typeof trace>[0], call = "c1") => (
      <ToolCatalogue.Provider value={toolMap([show])}>
        <ToolTraceCard trace={trace({ call_id: call, server: "counter", tool: "show", ...extra })} />
      </ToolCatalogue.Provider>
    );
    const { rerender } = renderIn(card({ status: "writing", arguments: null, arguments_text: '{"start": 4, "la' }));
    const { frame, posted, fromView } = await talkToView();
    await fromView({ jsonrpc: "2.0", id: 1, method: "ui/initialize", params: {} });
    await fromView({ jsonrpc: "2.0", method: "ui/notifications/initialized" });
    rerender(card({ status: "writing", arguments: null, arguments_text: '{"start": 4, "label": "Secret' }));
    // Waiting for the user's approval, the view stays (the same page) and hears no input yet.
    rerender(card({ status: "pending_approval", arguments: { start: 4, label: "Secret" } }));
    await new Promise((done) => setTimeout(done, 300));
    expect(screen.getByTestId("app-view-frame")).toBe(frame);
    const inputs = () => posted.filter((m) => String(m.method).startsWith("ui/notifications/tool-input"));
    expect(inputs()).toEqual([]);
    // Stopped before the user answered: the view hears the call ended, never what it was.
    rerender(card({ status: "cancelled", arguments: { start: 4, label: "Secret" } }));
    await waitFor(() => expect(posted.some((m) => m.method === "ui/notifications/tool-cancelled")).toBe(true));
    expect(inputs()).toEqual([]);
    expect(JSON.stringify(posted)).not.toContain("Secret");
    // Denied: the view goes, having heard nothing of it.
    rerender(card({ status: "denied", arguments: { start: 4, label: "Secret" } }));
    await waitFor(() => expect(screen.queryByTestId("app-view-frame")).toBeNull());
    expect(JSON.stringify(posted)).not.toContain("Secret");
    cleanup();

    // Allowed: it runs, and the view hears the whole call.
    const again = renderIn(card({ status: "pending_approval", arguments: { start: 5 } }, "c2"));
    const second = await talkToView();
    await second.fromView({ jsonrpc: "2.0", id: 1, method: "ui/initialize", params: {} });
    await second.fromView({ jsonrpc: "2.0", method: "ui/notifications/initialized" });
    expect(second.posted.some((m) => String(m.method).startsWith("ui/notifications/tool-input"))).toBe(false);
    again.rerender(card({ status: "running", arguments: { start: 5 } }, "c2"));
    await waitFor(() => expect(second.posted).toContainEqual({ jsonrpc: "2.0", method: "ui/notifications/tool-input", params: { arguments: { start: 5 } } }));
  });

  it("loads the tool's page in a sandboxed frame and tells it the call once it is initialised", async () => {
    const { frame, posted, fromView } = await renderView();
    expect(invoke).toHaveBeenCalledWith("open_app_view", { server: "counter", uri: "ui://counter/view.html", request: expect.any(String) });
    expect(frame.getAttribute("src")).toBe(page.url);
    expect(frame.getAttribute("sandbox")).toBe("allow-scripts");
    await fromView({ jsonrpc: "2.0", id: 1, method: "ui/initialize", params: {} });
    await fromView({ jsonrpc: "2.0", method: "ui/notifications/initialized" });
    await waitFor(() => expect(posted).toHaveLength(3));
    expect(posted[0]).toMatchObject({ id: 1, result: { hostContext: { toolInfo: { tool: { name: "show" } }, displayMode: "inline" } } });
    expect(posted[1]).toEqual({ jsonrpc: "2.0", method: "ui/notifications/tool-input", params: { arguments: { start: 2 } } });
    expect(posted[2]).toMatchObject({ method: "ui/notifications/tool-result", params: { content: [{ type: "text", text: "2" }], isError: false } });
    // A message from anywhere but the frame is not the view's.
    window.dispatchEvent(new MessageEvent("message", { data: { jsonrpc: "2.0", id: 7, method: "ping" }, source: window }));
    expect(posted).toHaveLength(3);
    // The view shows the result; its text is one click away, in the call's details.
    expect(screen.queryByTestId("tool-result")).toBeNull();
    fireEvent.click(screen.getByTestId("trace-toggle"));
    expect(screen.getByText("Result")).toBeTruthy();
    expect(screen.getByTestId("tool-result").textContent).toContain("2");
  });

  it("asks before the view runs a tool whose approval is ask, and runs it only once allowed", async () => {
    const { posted, fromView } = await renderView();
    await fromView({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "bump", arguments: { by: 1 } } });
    expect((await screen.findByTestId("app-view-ask")).textContent).toContain("bump");
    expect(invoke).not.toHaveBeenCalledWith("call_tool_for_view", expect.anything());
    // A click as the question appears does nothing: its buttons answer only after a moment.
    expect((screen.getByTestId("app-view-allow") as HTMLButtonElement).disabled).toBe(true);
    fireEvent.click(screen.getByTestId("app-view-allow"));
    // A second request waits behind the one on screen; it never replaces it.
    await fromView({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "bump", arguments: { by: 1000 } } });
    expect(screen.getByTestId("app-view-ask").textContent).toContain('"by": 1\n');
    expect(posted.find((m) => m.id === 2 || m.id === 3)).toBeUndefined();
    await press("app-view-allow");
    await waitFor(() => expect(posted).toContainEqual({ jsonrpc: "2.0", id: 2, result: { content: [{ type: "text", text: "3" }] } }));
    expect(invoke).toHaveBeenCalledWith("call_tool_for_view", { server: "counter", tool: "bump", arguments: { by: 1 }, approved: true, request: expect.any(String) });

    // Then the second, again inactive for a moment.
    await waitFor(() => expect(screen.getByTestId("app-view-ask").textContent).toContain('"by": 1000'));
    expect((screen.getByTestId("app-view-deny") as HTMLButtonElement).disabled).toBe(true);
    await press("app-view-deny");
    await waitFor(() => expect(posted.find((m) => m.id === 3)).toMatchObject({ error: { message: "You did not allow bump to run" } }));
    expect(invoke.mock.calls.filter(([c]) => c === "call_tool_for_view")).toHaveLength(1);
    // A tool the server made for the model only goes to the core unasked, which refuses it.
    await fromView({ jsonrpc: "2.0", id: 6, method: "tools/call", params: { name: "reset", arguments: {} } });
    await waitFor(() => expect(invoke).toHaveBeenCalledWith("call_tool_for_view", { server: "counter", tool: "reset", arguments: {}, approved: false, request: expect.any(String) }));
    expect(screen.queryByTestId("app-view-ask")).toBeNull();
    await fromView({ jsonrpc: "2.0", id: 4, method: "tools/call", params: { name: "missing" } });
    await waitFor(() => expect(posted.find((m) => m.id === 4)).toMatchObject({ error: { message: "counter has no tool missing" } }));
  });

  it("asks the model for the view through the core, which has the user review it first", async () => {
    const { posted, fromView } = await renderView();
    const answer = { role: "assistant", content: { type: "text", text: "Four." }, model: "scripted-model" };
    invoke.mockImplementation((command) => (command === "sample_for_view" ? Promise.resolve(answer) : Promise.reject(new Error(command))));
    const params = { messages: [{ role: "user", content: { type: "text", text: "2 + 2?" } }], maxTokens: 10 };
    await fromView({ jsonrpc: "2.0", id: 12, method: "sampling/createMessage", params });
    await waitFor(() => expect(posted).toContainEqual({ jsonrpc: "2.0", id: 12, result: answer }));
    expect(invoke).toHaveBeenCalledWith("sample_for_view", { server: "counter", params, request: expect.any(String) });
  });

  it("calls off what the view still runs when its card goes", async () => {
    const { fromView } = await renderView();
    invoke.mockImplementation((command) => (command === "cancel_request" ? Promise.resolve() : new Promise(() => undefined)));
    await fromView({ jsonrpc: "2.0", id: 2, method: "resources/read", params: { uri: "ui://counter/data.json" } });
    await waitFor(() => expect(invoke).toHaveBeenCalledWith("read_resource_for_view", expect.objectContaining({ uri: "ui://counter/data.json" })));
    const read = invoke.mock.calls.find(([c]) => c === "read_resource_for_view")?.[1];
    expect(invoke.mock.calls.some(([c]) => c === "cancel_request")).toBe(false);
    cleanup();
    expect(invoke).toHaveBeenCalledWith("cancel_request", { request: read?.request });
  });

  it("offers the files a view hands over, saves them where the user says and shows where they went", async () => {
    const { posted, fromView } = await renderView();
    const saved = [{ name: "notes.txt", path: "/home/u/Downloads/notes.txt", bytes: 5 }];
    invoke.mockImplementation((command) => {
      if (command === "download_names") return Promise.resolve(["notes.txt", "Q4 report"]);
      if (command === "save_files") return Promise.resolve(saved);
      if (command === "show_in_folder" || command === "open_link") return Promise.resolve();
      return Promise.reject(new Error(`unexpected ${command}`));
    });
    const contents = [
      { type: "resource", resource: { uri: "file:///notes.txt", text: "hello" } },
      { type: "resource_link", uri: "https://example.com/q4.pdf", name: "Q4 report" },
    ];
    await fromView({ jsonrpc: "2.0", id: 8, method: "ui/download-file", params: { contents } });
    const offer = await screen.findByTestId("app-view-download");
    expect([...offer.querySelectorAll("li")].map((li) => li.textContent)).toEqual(["notes.txt 5 B", "Q4 report opens in your browser"]);
    expect(invoke).not.toHaveBeenCalledWith("save_files", expect.anything());
    await press("app-view-save");
    await waitFor(() => expect(posted).toContainEqual({ jsonrpc: "2.0", id: 8, result: {} }));
    // The web address goes to the browser; the rest is saved by the core.
    expect(invoke).toHaveBeenCalledWith("open_link", { url: "https://example.com/q4.pdf" });
    expect(invoke).toHaveBeenCalledWith("save_files", { server: "counter", contents: [contents[0]], choose: false, request: expect.any(String) });
    expect(screen.getByTestId("app-view-saved").textContent).toContain("Saved notes.txt in /home/u/Downloads");
    fireEvent.click(screen.getByTestId("show-in-folder"));
    expect(invoke).toHaveBeenCalledWith("show_in_folder", { path: "/home/u/Downloads/notes.txt" });

    // Not saved: the view hears so; a newer offer waits behind the one on screen.
    await fromView({ jsonrpc: "2.0", id: 90, method: "ui/download-file", params: { contents: [contents[0]] } });
    await screen.findByTestId("app-view-save-cancel");
    await fromView({ jsonrpc: "2.0", id: 9, method: "ui/download-file", params: { contents: [contents[0]] } });
    expect(posted.find((m) => m.id === 90)).toBeUndefined();
    await press("app-view-save-cancel");
    await waitFor(() => expect(posted).toContainEqual({ jsonrpc: "2.0", id: 90, result: { isError: true } }));
    await press("app-view-save-cancel");
    await waitFor(() => expect(posted).toContainEqual({ jsonrpc: "2.0", id: 9, result: { isError: true } }));
    // A folder dialog the user cancelled saves nothing either.
    invoke.mockImplementation((command) => Promise.resolve(command === "download_names" ? ["notes.txt"] : null));
    await fromView({ jsonrpc: "2.0", id: 10, method: "ui/download-file", params: { contents: [contents[0]] } });
    await press("app-view-save-choose");
    await waitFor(() => expect(posted).toContainEqual({ jsonrpc: "2.0", id: 10, result: { isError: true } }));
    expect(invoke).toHaveBeenLastCalledWith("save_files", expect.objectContaining({ choose: true }));
    // A failed save says why, in the card.
    invoke.mockImplementation((command) =>
      command === "download_names"
        ? Promise.resolve(["notes.txt"])
        : Promise.reject({ kind: "data_dir", message: "could not save /full/notes.txt: No space left on device" }),
    );
    await fromView({ jsonrpc: "2.0", id: 11, method: "ui/download-file", params: { contents: [contents[0]] } });
    await press("app-view-save");
    await waitFor(() => expect(posted).toContainEqual({ jsonrpc: "2.0", id: 11, result: { isError: true } }));
    expect(screen.getByTestId("app-view-save-error").textContent).toBe("Nothing was saved: could not save /full/notes.txt: No space left on device");
  });

  it("asks about the names the core saves under, and says which name each file was saved as", async () => {
    const { posted, fromView } = await renderView();
    // A name that reads backwards (U+202E) and a Windows device name, as the view sends them.
    const contents = [
      { type: "resource_link", uri: "ui://counter/a", name: "invoice\u202Efdp.exe" },
      { type: "resource", resource: { uri: "ui://counter/CON", text: "x" } },
    ];
    invoke.mockImplementation((command, args) => {
      if (command === "download_names") return Promise.resolve(["invoicefdp.exe", "_CON"]);
      if (command === "save_files") return Promise.resolve([{ name: "invoicefdp (1).exe", path: "/d/invoicefdp (1).exe", bytes: 1 }, { name: "_CON", path: "/d/_CON", bytes: 1 }]);
      return Promise.reject(new Error(`unexpected ${command} ${JSON.stringify(args)}`));
    });
    await fromView({ jsonrpc: "2.0", id: 20, method: "ui/download-file", params: { contents } });
    const offer = await screen.findByTestId("app-view-download");
    expect(invoke).toHaveBeenCalledWith("download_names", { contents });
    expect([...offer.querySelectorAll("li strong")].map((b) => b.textContent)).toEqual(["invoicefdp.exe", "_CON"]);
    await press("app-view-save");
    await waitFor(() => expect(posted).toContainEqual({ jsonrpc: "2.0", id: 20, result: {} }));
    expect(screen.getByTestId("app-view-saved").textContent).toContain("Saved invoicefdp (1).exe, _CON in /d");
  });

  it("sends the view's message to the chat once the user confirms it, and its context, and grows with its content", async () => {
    const { frame, posted, fromView, sendMessage, setContext } = await renderView();
    await fromView({ jsonrpc: "2.0", id: 4, method: "ui/update-model-context", params: { content: [{ type: "text", text: "At 3" }] } });
    await waitFor(() => expect(setContext).toHaveBeenCalledWith("c1", { title: "From the view of show", text: "At 3" }));
    const message = (id: number, text: string) => fromView({ jsonrpc: "2.0", id, method: "ui/message", params: { role: "user", content: [{ type: "text", text }] } });
    await message(5, "Count again");
    expect((await screen.findByTestId("app-view-ask-message")).textContent).toBe("The view of counter wants to send this message as you:Count againSendAllow for this viewDeny");
    expect(sendMessage).not.toHaveBeenCalled();
    await press("app-view-consent-deny");
    await waitFor(() => expect(posted.find((m) => m.id === 5)).toMatchObject({ error: { message: "You did not send the view's message" } }));
    expect(sendMessage).not.toHaveBeenCalled();
    await message(6, "Count again");
    await press("app-view-consent-once");
    await waitFor(() => expect(sendMessage).toHaveBeenCalledWith("Count again"));
    // Once more it asks; allowed for the view, the card says so and the next ones go unasked.
    await message(7, "And again");
    await press("app-view-consent-view");
    await waitFor(() => expect(sendMessage).toHaveBeenCalledWith("And again"));
    expect(screen.getByTestId("app-view-trusted-message").textContent).toBe("This view sends messages as you without asking. Ask me again");
    await message(8, "Once more");
    await waitFor(() => expect(sendMessage).toHaveBeenCalledWith("Once more"));
    expect(screen.queryByTestId("app-view-ask-message")).toBeNull();
    await fromView({ jsonrpc: "2.0", method: "ui/notifications/size-changed", params: { height: 321.4 } });
    expect(frame.style.height).toBe("322px");
    await fromView({ jsonrpc: "2.0", method: "ui/notifications/size-changed", params: { height: 99999 } });
    expect(frame.style.height).toBe("720px");
  });

  it("opens a view's link once the user confirms it", async () => {
    const { posted, fromView } = await renderView();
    invoke.mockImplementation((command) => (command === "open_link" ? Promise.resolve() : Promise.reject(new Error(command))));
    await fromView({ jsonrpc: "2.0", id: 3, method: "ui/open-link", params: { url: "https://example.com/a" } });
    expect((await screen.findByTestId("app-view-ask-link")).textContent).toContain("https://example.com/a");
    expect(invoke).not.toHaveBeenCalledWith("open_link", expect.anything());
    await press("app-view-consent-deny");
    await waitFor(() => expect(posted).toContainEqual({ jsonrpc: "2.0", id: 3, result: { isError: true } }));
    expect(invoke).not.toHaveBeenCalledWith("open_link", expect.anything());
    await fromView({ jsonrpc: "2.0", id: 4, method: "ui/open-link", params: { url: "https://example.com/b" } });
    await press("app-view-consent-view");
    await waitFor(() => expect(posted).toContainEqual({ jsonrpc: "2.0", id: 4, result: {} }));
    expect(invoke).toHaveBeenCalledWith("open_link", { url: "https://example.com/b" });
    expect(screen.getByTestId("app-view-trusted-link").textContent).toContain("This view opens links without asking.");
  });

  it("goes full screen right after a click inside the view or once the user says yes, under Patchbay's bar, back on Esc, and follows the window's theme", async () => {
    const { frame, posted, fromView } = await renderView();
    await fromView({ jsonrpc: "2.0", id: 1, method: "ui/initialize", params: {} });
    await fromView({ jsonrpc: "2.0", method: "ui/notifications/initialized" });
    const box = frame.parentElement!;
    // Without a click inside it, the user is asked; a no keeps the view in its card.
    await fromView({ jsonrpc: "2.0", id: 2, method: "ui/request-display-mode", params: { mode: "fullscreen" } });
    expect((await screen.findByTestId("app-view-ask-fullscreen")).textContent).toContain("asks to show itself full screen");
    expect(box.dataset.mode).toBe("inline");
    await press("app-view-fullscreen-deny");
    await waitFor(() => expect(posted).toContainEqual({ jsonrpc: "2.0", id: 2, result: { mode: "inline" } }));
    expect(box.dataset.mode).toBe("inline");
    // Focused long ago: not a click just now either, and the focus goes back to the window.
    const now = vi.spyOn(performance, "now");
    await clickInside(frame);
    now.mockReturnValue(performance.now() + GESTURE_MS + 1);
    await fromView({ jsonrpc: "2.0", id: 3, method: "ui/request-display-mode", params: { mode: "fullscreen" } });
    await screen.findByTestId("app-view-ask-fullscreen");
    expect(document.activeElement).not.toBe(frame);
    now.mockRestore();
    // A yes on the card: full screen.
    await press("app-view-fullscreen-allow");
    await waitFor(() => expect(posted).toContainEqual({ jsonrpc: "2.0", id: 3, result: { mode: "fullscreen" } }));
    expect(box.dataset.mode).toBe("fullscreen");
    fireEvent.keyDown(window, { key: "Escape" });
    await waitFor(() => expect(box.dataset.mode).toBe("inline"));
    await clickInside(frame);
    await fromView({ jsonrpc: "2.0", id: 4, method: "ui/request-display-mode", params: { mode: "fullscreen" } });
    await waitFor(() => expect(posted).toContainEqual({ jsonrpc: "2.0", id: 4, result: { mode: "fullscreen" } }));
    expect(box.dataset.mode).toBe("fullscreen");
    // Patchbay's bar is the box's, before the frame and outside it.
    const bar = screen.getByTestId("app-view-bar");
    expect(bar.parentElement).toBe(box);
    expect(bar.compareDocumentPosition(frame) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
    expect(bar.textContent).toContain("Patchbay · the view of show (counter)");
    expect(posted).toContainEqual({ jsonrpc: "2.0", method: "ui/notifications/host-context-changed", params: { displayMode: "fullscreen" } });
    fireEvent.keyDown(window, { key: "Escape" });
    await waitFor(() => expect(box.dataset.mode).toBe("inline"));
    expect(screen.queryByTestId("app-view-exit")).toBeNull();
    expect(posted).toContainEqual({ jsonrpc: "2.0", method: "ui/notifications/host-context-changed", params: { displayMode: "inline" } });
    document.documentElement.dataset.theme = "dark";
    await waitFor(() => expect(posted).toContainEqual({ jsonrpc: "2.0", method: "ui/notifications/host-context-changed", params: { theme: "dark" } }));
    delete document.documentElement.dataset.theme;
  });

  it("moves to the window's corner when the view asks, and back into its card", async () => {
    const { frame, posted, fromView } = await renderView();
    await fromView({ jsonrpc: "2.0", id: 1, method: "ui/initialize", params: {} });
    expect(posted[0]).toMatchObject({ result: { hostContext: { availableDisplayModes: ["inline", "fullscreen", "pip"] } } });
    await fromView({ jsonrpc: "2.0", method: "ui/notifications/initialized" });
    await fromView({ jsonrpc: "2.0", id: 2, method: "ui/request-display-mode", params: { mode: "pip" } });
    await waitFor(() => expect(posted).toContainEqual({ jsonrpc: "2.0", id: 2, result: { mode: "pip" } }));
    const box = frame.parentElement!;
    expect(box.dataset.mode).toBe("pip");
    expect(box.classList.contains("pip")).toBe(true);
    // The same page, not loaded again; the card says where it went.
    expect(screen.getByTestId("app-view-frame")).toBe(frame);
    expect(screen.getByTestId("app-view-in-corner").textContent).toBe("The view is in the window's corner.");
    // Esc is for full screen only.
    fireEvent.keyDown(window, { key: "Escape" });
    expect(box.dataset.mode).toBe("pip");
    fireEvent.click(screen.getByTestId("app-view-exit"));
    await waitFor(() => expect(box.dataset.mode).toBe("inline"));
    expect(screen.queryByTestId("app-view-in-corner")).toBeNull();
    expect(posted).toContainEqual({ jsonrpc: "2.0", method: "ui/notifications/host-context-changed", params: { displayMode: "inline" } });
  });

  it("asks the view to tear down before its card goes, and closes a view that asks to be closed until opened again", async () => {
    const { frame, posted, fromView, views } = await renderView();
    const callId = trace({}).call_id;
    // Not initialised yet: nothing to save, it may go at once.
    let went = 0;
    views.before(() => went++, [callId]);
    await waitFor(() => expect(went).toBe(1));
    expect(posted.some((m) => m.method === "ui/resource-teardown")).toBe(false);
    await fromView({ jsonrpc: "2.0", id: 1, method: "ui/initialize", params: {} });
    await fromView({ jsonrpc: "2.0", method: "ui/notifications/initialized" });
    views.before(() => went++, [callId]);
    await waitFor(() => expect(posted.filter((m) => m.method === "ui/resource-teardown")).toHaveLength(1));
    const asked = posted.find((m) => m.method === "ui/resource-teardown")!;
    expect(went).toBe(1);
    await fromView({ jsonrpc: "2.0", id: asked.id, result: {} });
    await waitFor(() => expect(went).toBe(2));

    // The view asks to be closed: its frame goes (it was torn down already), the card stays.
    await fromView({ jsonrpc: "2.0", method: "ui/notifications/request-teardown", params: {} });
    await screen.findByTestId("app-view-closed");
    expect(screen.queryByTestId("app-view-frame")).toBeNull();
    fireEvent.click(screen.getByTestId("app-view-reopen"));
    const again = (await screen.findByTestId("app-view-frame")) as HTMLIFrameElement;
    expect(again).not.toBe(frame);
    // Opened again, it is a new view: initialised, it hears the call again.
    const { posted: postedAgain, fromView: fromViewAgain } = await talkToView();
    await fromViewAgain({ jsonrpc: "2.0", id: 1, method: "ui/initialize", params: {} });
    await fromViewAgain({ jsonrpc: "2.0", method: "ui/notifications/initialized" });
    await waitFor(() => expect(postedAgain.some((m) => m.method === "ui/notifications/tool-result")).toBe(true));
  });

  it("says which permissions the view asked for are not given to it", async () => {
    invoke.mockImplementation((command) =>
      command === "open_app_view" ? Promise.resolve({ ...page, withheld: ["camera", "geolocation", "bluetooth"] }) : Promise.reject(new Error(command)),
    );
    renderIn(
      <ToolCatalogue.Provider value={toolMap([show])}>
        <ToolTraceCard trace={trace({ server: "counter", tool: "show", status: "done" })} />
      </ToolCatalogue.Provider>,
    );
    const note = await screen.findByTestId("app-view-withheld");
    expect(note.textContent).toBe("This view asked for the camera, your location, bluetooth, which Patchbay does not give views: what needs it will not work.");
  });

  it("says why a view could not be shown", async () => {
    invoke.mockImplementation(() => Promise.reject(new Error('MCP server "counter": the view ui://counter/view.html cannot be shown: it is not of type text/html;profile=mcp-app')));
    renderIn(
      <ToolCatalogue.Provider value={toolMap([show])}>
        <ToolTraceCard trace={trace({ server: "counter", tool: "show", status: "done" })} />
      </ToolCatalogue.Provider>,
    );
    expect((await screen.findByTestId("app-view-error")).textContent).toContain("not of type text/html;profile=mcp-app");
  });
});
