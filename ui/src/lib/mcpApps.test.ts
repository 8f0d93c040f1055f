import { describe, expect, it, vi } from "vitest";
import { callToolResult, downloadItems, LiveViews, TEARDOWN_WAIT_MS, ViewBridge, webLinks, type ViewHost } from "./mcpApps";

function setup(overrides: Partial<ViewHost> = {}) {
  const posted: Record<string, unknown>[] = [];
  const host: ViewHost = {
    callTool: vi.fn(() => Promise.resolve({ content: [{ type: "text", text: "2" }] })),
    readResource: vi.fn(() => Promise.resolve({ contents: [] })),
    listResources: vi.fn(() => Promise.resolve({ resources: [{ uri: "ui://c/a", name: "a" }] })),
    openLink: vi.fn(() => Promise.resolve()),
    sendMessage: vi.fn(() => Promise.resolve()),
    resize: vi.fn(),
    updateContext: vi.fn(),
    setDisplayMode: vi.fn((mode: "inline" | "fullscreen") => mode),
    downloadFile: vi.fn(() => Promise.resolve(true)),
    sample: vi.fn(() => Promise.resolve({ role: "assistant", content: { type: "text", text: "Four." }, model: "m" })),
    close: vi.fn(),
    ...overrides,
  };
  const bridge = new ViewBridge((m) => posted.push(m), host, () => ({ theme: "dark" }), "1.2.3");
  const ask = (id: number, method: string, params: unknown = {}) => bridge.receive({ jsonrpc: "2.0", id, method, params });
  return { posted, host, bridge, ask };
}

describe("ViewBridge", () => {
  it("asks an initialised view to tear down once, and waits for its answer or gives up", async () => {
    const { posted, bridge } = setup();
    // Not initialised: nothing to save, nothing asked.
    await bridge.teardown();
    expect(posted).toHaveLength(0);
    await bridge.receive({ jsonrpc: "2.0", method: "ui/notifications/initialized" });
    let done = false;
    const torn = bridge.teardown().then(() => (done = true));
    expect(posted).toEqual([{ jsonrpc: "2.0", id: "patchbay-teardown", method: "ui/resource-teardown", params: {} }]);
    await Promise.resolve();
    expect(done).toBe(false);
    // Someone else's answer is not its answer.
    await bridge.receive({ jsonrpc: "2.0", id: 9, result: {} });
    await Promise.resolve();
    expect(done).toBe(false);
    await bridge.receive({ jsonrpc: "2.0", id: "patchbay-teardown", result: {} });
    await torn;
    expect(done).toBe(true);
    // Asked once: a second teardown is the first.
    await bridge.teardown();
    expect(posted).toHaveLength(1);

    vi.useFakeTimers();
    try {
      const silent = setup();
      await silent.bridge.receive({ jsonrpc: "2.0", method: "ui/notifications/initialized" });
      let gone = false;
      void silent.bridge.teardown().then(() => (gone = true));
      await vi.advanceTimersByTimeAsync(TEARDOWN_WAIT_MS - 10);
      expect(gone).toBe(false);
      await vi.advanceTimersByTimeAsync(20);
      expect(gone).toBe(true);
    } finally {
      vi.useRealTimers();
    }
  });

  it("passes on a view's wish to be closed", async () => {
    const { host, bridge } = setup();
    await bridge.receive({ jsonrpc: "2.0", method: "ui/notifications/request-teardown", params: {} });
    expect(host.close).toHaveBeenCalledTimes(1);
  });

  it("answers ui/initialize and holds its news until the view says it is initialised", async () => {
    const { posted, bridge, ask } = setup();
    bridge.notify("ui/notifications/tool-input", { arguments: { city: "Oslo" } });
    await ask(1, "ui/initialize", { appInfo: { name: "w", version: "1" }, appCapabilities: {}, protocolVersion: "2026-01-26" });
    expect(posted).toHaveLength(1);
    expect(posted[0]).toMatchObject({
      jsonrpc: "2.0",
      id: 1,
      result: {
        protocolVersion: "2026-01-26",
        hostInfo: { name: "Patchbay", version: "1.2.3" },
        hostCapabilities: { serverTools: {}, serverResources: {}, openLinks: {}, downloadFile: {}, sampling: {}, message: { text: {} } },
        hostContext: { theme: "dark" },
      },
    });
    await bridge.receive({ jsonrpc: "2.0", method: "ui/notifications/initialized" });
    expect(posted[1]).toEqual({ jsonrpc: "2.0", method: "ui/notifications/tool-input", params: { arguments: { city: "Oslo" } } });
    bridge.notify("ui/notifications/tool-result", { content: [] });
    expect(posted[2]).toMatchObject({ method: "ui/notifications/tool-result" });
  });

  it("routes calls and reads to the host, and a failure becomes the view's error", async () => {
    const { posted, host, ask } = setup({ callTool: vi.fn(() => Promise.reject({ kind: "invalid", message: "its approval is set to deny" })) });
    await ask(2, "resources/read", { uri: "ui://w/data" });
    expect(host.readResource).toHaveBeenCalledWith("ui://w/data");
    expect(posted[0]).toEqual({ jsonrpc: "2.0", id: 2, result: { contents: [] } });
    await ask(3, "tools/call", { name: "refresh", arguments: { n: 1 } });
    expect(host.callTool).toHaveBeenCalledWith("refresh", { n: 1 });
    expect(posted[1]).toEqual({ jsonrpc: "2.0", id: 3, error: { code: -32603, message: "its approval is set to deny" } });
    await ask(4, "tools/call", {});
    expect(posted[2]).toMatchObject({ id: 4, error: { code: -32602 } });
    await ask(5, "elicitation/create", {});
    expect(posted[3]).toMatchObject({ id: 5, error: { code: -32601 } });
    await ask(6, "resources/list", {});
    expect(posted[4]).toEqual({ jsonrpc: "2.0", id: 6, result: { resources: [{ uri: "ui://c/a", name: "a" }] } });
  });

  it("sends a view's text message to the chat, and refuses other content", async () => {
    const { posted, host, ask } = setup();
    await ask(1, "ui/message", { role: "user", content: [{ type: "text", text: "Book it" }, { type: "text", text: "for two" }] });
    expect(host.sendMessage).toHaveBeenCalledWith("Book it\n\nfor two");
    expect(posted[0]).toEqual({ jsonrpc: "2.0", id: 1, result: {} });
    await ask(2, "ui/message", { role: "user", content: [{ type: "image", data: "x", mimeType: "image/png" }] });
    expect(posted[1]).toMatchObject({ id: 2, error: { code: -32602 } });
    expect(host.sendMessage).toHaveBeenCalledTimes(1);
  });

  it("opens links through the host, says when one was refused, and follows the view's size", async () => {
    const { posted, host, bridge, ask } = setup({ openLink: vi.fn((url: string) => (url.startsWith("https:") ? Promise.resolve() : Promise.reject(new Error("no")))) });
    await ask(1, "ui/open-link", { url: "https://example.com" });
    await ask(2, "ui/open-link", { url: "file:///etc/passwd" });
    expect(posted.map((m) => m.result)).toEqual([{}, { isError: true }]);
    await bridge.receive({ jsonrpc: "2.0", method: "ui/notifications/size-changed", params: { width: 300, height: 240 } });
    expect(host.resize).toHaveBeenCalledWith(240);
    await bridge.receive("not json-rpc");
    await bridge.receive({ jsonrpc: "2.0", id: 9, result: {} });
    expect(posted).toHaveLength(2);
  });
});

describe("ui/request-display-mode", () => {
  it("offers full screen and picture-in-picture, and keeps a view that asks for another mode inline", async () => {
    const { posted, host, ask } = setup();
    await ask(1, "ui/request-display-mode", { mode: "fullscreen" });
    await ask(2, "ui/request-display-mode", { mode: "pip" });
    await ask(3, "ui/request-display-mode", { mode: "floating" });
    expect(vi.mocked(host.setDisplayMode).mock.calls).toEqual([["fullscreen"], ["pip"], ["inline"]]);
    expect(posted.map((m) => m.result)).toEqual([{ mode: "fullscreen" }, { mode: "pip" }, { mode: "inline" }]);
  });
});

describe("ui/update-model-context", () => {
  it("gives the host the view's text and structured content, replaced by each update and dropped when empty", async () => {
    const { posted, host, ask } = setup();
    await ask(1, "ui/update-model-context", { content: [{ type: "text", text: "Selected: row 3" }], structuredContent: { row: 3 } });
    expect(host.updateContext).toHaveBeenLastCalledWith('Selected: row 3\n\n{\n  "row": 3\n}');
    expect(posted[0]).toEqual({ jsonrpc: "2.0", id: 1, result: {} });
    await ask(2, "ui/update-model-context", { content: [] });
    expect(host.updateContext).toHaveBeenLastCalledWith(null);
    await ask(3, "ui/update-model-context", { content: [{ type: "text", text: "x".repeat(20_001) }] });
    expect(posted[2]).toMatchObject({ id: 3, error: { code: -32602 } });
    expect(host.updateContext).toHaveBeenCalledTimes(2);
  });
});

describe("callToolResult", () => {
  it("offers a view's files to the host and says when none was saved; what is not a file is refused unasked", async () => {
    const saved = vi.fn<ViewHost["downloadFile"]>(() => Promise.resolve(true));
    const { posted, ask } = setup({ downloadFile: saved });
    const contents = [
      { type: "resource", resource: { uri: "file:///notes.txt", mimeType: "text/plain", text: "héllo" } },
      { type: "resource_link", uri: "ui://c/report.csv", name: "Report", size: 2048 },
    ];
    await ask(1, "ui/download-file", { contents });
    expect(saved).toHaveBeenCalledWith(contents);
    expect(posted[0]).toEqual({ jsonrpc: "2.0", id: 1, result: {} });
    saved.mockResolvedValueOnce(false);
    await ask(2, "ui/download-file", { contents });
    expect(posted[1]).toEqual({ jsonrpc: "2.0", id: 2, result: { isError: true } });
    await ask(3, "ui/download-file", { contents: [{ type: "text", text: "hi" }] });
    expect(posted[2]).toMatchObject({ id: 3, error: { code: -32602, message: "item 0 of ui/download-file is neither a resource nor a resource link" } });
    await ask(4, "ui/download-file", { contents: [] });
    expect(posted[3]).toMatchObject({ id: 4, error: { code: -32602 } });
    expect(saved).toHaveBeenCalledTimes(2);
  });

  it("sizes a download's files and tells web addresses apart", () => {
    const contents = [
      { type: "resource", resource: { uri: "file:///My%20notes.txt", text: "héllo" } },
      { type: "resource", resource: { uri: "ui://c/pic.png", blob: "AAECAw==" } },
      { type: "resource_link", uri: "https://example.com/q4.pdf?x=1", name: "Q4 report" },
      { type: "resource_link", uri: "ui://c/data.csv" },
    ];
    expect(downloadItems(contents)).toEqual([
      { size: 6, web: false },
      { size: 4, web: false },
      { size: null, web: true },
      { size: null, web: false },
    ]);
    expect(webLinks(contents)).toEqual(["https://example.com/q4.pdf?x=1"]);
  });

  it("asks the model for the view through the host, and refuses a request without messages", async () => {
    const { posted, host, ask } = setup();
    const params = { messages: [{ role: "user", content: { type: "text", text: "2 + 2?" } }], maxTokens: 10 };
    await ask(1, "sampling/createMessage", params);
    expect(host.sample).toHaveBeenCalledWith(params);
    expect(posted[0]).toEqual({ jsonrpc: "2.0", id: 1, result: { role: "assistant", content: { type: "text", text: "Four." }, model: "m" } });
    await ask(2, "sampling/createMessage", { maxTokens: 10 });
    expect(posted[1]).toMatchObject({ id: 2, error: { code: -32602, message: "sampling/createMessage needs messages" } });
    expect(host.sample).toHaveBeenCalledTimes(1);
  });

  it("keeps only the latest partial input for a view that has not initialised yet", async () => {
    const { posted, bridge } = setup();
    bridge.notify("ui/notifications/tool-input-partial", { arguments: { city: "O" } });
    bridge.notify("ui/notifications/tool-input-partial", { arguments: { city: "Osl" } });
    bridge.notify("ui/notifications/tool-input", { arguments: { city: "Oslo" } });
    expect(posted).toHaveLength(0);
    await bridge.receive({ jsonrpc: "2.0", method: "ui/notifications/initialized" });
    expect(posted.map((m) => [m.method, (m.params as { arguments: unknown }).arguments])).toEqual([
      ["ui/notifications/tool-input-partial", { city: "Osl" }],
      ["ui/notifications/tool-input", { city: "Oslo" }],
    ]);
  });

  it("gives a stored result the MCP shape a view reads", () => {
    expect(
      callToolResult({
        content: [
          { type: "text", text: "hi" },
          { type: "image", mime_type: "image/png", data: "AAA" },
          { type: "resource_link", uri: "ui://w/x", name: null, mime_type: null },
        ],
        structured_content: { temp: 3 },
        is_error: false,
      }),
    ).toEqual({
      content: [
        { type: "text", text: "hi" },
        { type: "image", data: "AAA", mimeType: "image/png" },
        { type: "resource_link", uri: "ui://w/x", name: "ui://w/x" },
      ],
      structuredContent: { temp: 3 },
      isError: false,
    });
  });
});

describe("LiveViews", () => {
  it("runs what removes views once those views tore down, at once when none is on screen", async () => {
    const views = new LiveViews();
    const log: string[] = [];
    const view = (id: string) => views.add(id, () => Promise.resolve(void log.push(`torn ${id}`)));
    view("a");
    view("b");
    const removeC = view("c");
    const went = (what: string, callIds?: string[]) => new Promise<void>((resolve) => views.before(() => resolve(void log.push(`went ${what}`)), callIds));
    void went("x", ["x"]);
    expect(log).toEqual(["went x"]);
    await went("b", ["b", "x"]);
    expect(log).toEqual(["went x", "torn b", "went b"]);
    removeC();
    await went("all");
    expect(log).toEqual(["went x", "torn b", "went b", "torn a", "torn b", "went all"]);
  });
});
