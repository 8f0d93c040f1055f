import { act, cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { TurnEvent, ConversationRenamed, ConversationSummary, ServerStatus } from "../lib/ipc";
import { message, providerView, renderIn, serverView, toolInfo, trace } from "../test/render";
import { expectAccessible } from "../test/axe";
import { LiveViews, LiveViewsContext } from "../lib/mcpApps";
import { ChatStores } from "../lib/chatStore";
import { ChatPage, type ChatIpc } from "./ChatPage";

afterEach(cleanup);

function fakeIpc() {
  let emit: (e: TurnEvent) => void = () => undefined;
  let finish: () => void = () => undefined;
  let serverStatus: (s: ServerStatus) => void = () => undefined;
  let renamed: (r: ConversationRenamed) => void = () => undefined;
  const conv: ConversationSummary = { id: "c1", title: "First", created_at: 1, updated_at: 1, snippet: null, pinned: false };
  const ipc: ChatIpc = {
    listConversations: vi.fn(() => Promise.resolve([conv])),
    createConversation: vi.fn(() => Promise.resolve({ ...conv, id: "c2", title: "" })),
    renameConversation: vi.fn(() => Promise.resolve()),
    pinConversation: vi.fn(() => Promise.resolve()),
    deleteConversation: vi.fn(() => Promise.resolve()),
    discardConversationIfUnused: vi.fn(() => Promise.resolve(true)),
    getConversation: vi.fn((id: string) =>
      Promise.resolve({
        conversation: { ...conv, id },
        messages: id === "c1" ? [message("u0", "user", "earlier question"), message("a0", "assistant", "earlier answer")] : [],
        earlier: id === "c1" ? 2 : 0,
        settings: { provider: null, model: null, servers: null, disabled_tools: [], assistant_id: null, system_prompt: null, reasoning: null },
      }),
    ),
    earlierMessages: vi.fn(() =>
      Promise.resolve({ messages: [message("u-1", "user", "first question"), message("a-1", "assistant", "first answer")], earlier: 0 }),
    ),
    updateConversationSettings: vi.fn(() => Promise.resolve()),
    exportConversation: vi.fn(() => Promise.resolve("/tmp/x.md")),
    sendMessage: vi.fn((_id: string, _text: string, _a: unknown, onEvent: (e: TurnEvent) => void) => {
      emit = onEvent;
      return new Promise<{ assistant_message_id: string }>((resolve) => {
        finish = () => resolve({ assistant_message_id: "a1" });
      });
    }),
    regenerate: vi.fn(() => Promise.resolve({ assistant_message_id: "a2" })),
    editMessage: vi.fn(() => Promise.resolve({ assistant_message_id: "a3" })),
    cancelTurn: vi.fn(() => Promise.resolve()),
    switchBranch: vi.fn(() => Promise.resolve([])),
    deleteMessage: vi.fn(() => Promise.resolve([message("u0", "user", "earlier question")])),
    forkConversation: vi.fn(() => Promise.resolve({ ...conv, id: "c3", title: "First" })),
    respondApproval: vi.fn(() => Promise.resolve()),
    getTrace: vi.fn(() => Promise.resolve({ call_id: "t1", server: "fs", tool: "read", request: {}, response: {} })),
    readKeptResult: vi.fn((_conversation: string, result: number, offset: number) =>
      Promise.resolve({ kept: { result, chars: 12, lines: 1, sent_chars: 4 }, offset, text: "file body!!!" }),
    ),
    callTool: vi.fn(() => Promise.resolve({ content: [], structured_content: null, is_error: false })),
    readResource: vi.fn((_server: string, uri: string) =>
      Promise.resolve([{ uri, mime_type: "text/plain", text: `the text of ${uri}`, blob: null, size: 20, truncated: false }]),
    ),
    listPrompts: vi.fn(() => Promise.resolve([])),
    getPrompt: vi.fn(() => Promise.resolve("")),
    listResources: vi.fn(() => Promise.resolve([])),
    listResourceTemplates: vi.fn(() => Promise.resolve([])),
    expandResourceTemplate: vi.fn(() => Promise.resolve("")),
    completeArgument: vi.fn(() => Promise.resolve({ values: [], total: null, has_more: false })),
    listProviders: vi.fn(() => Promise.resolve([])),
    getSettings: vi.fn(() =>
      Promise.resolve({ theme: "system", language: "en", data_dir: "/d", auto_title: true, restore_pending: false, proxy: { mode: "environment" as const }, tool_share_percent: 10, client_metadata_url: "", keep_in_tray: false, quick_ask_shortcut: "", check_updates: true }),
    ),
    listTools: vi.fn(() => Promise.resolve([])),
    listServers: vi.fn(() => Promise.resolve([])),
    listAssistants: vi.fn(() =>
      Promise.resolve([
        { id: "as1", name: "Coder", system_prompt: "", provider: null, model: null, temperature: null, top_p: null, max_tokens: null, reasoning: null, servers: null, disabled_tools: [], kb_mode: "off" as const, knowledge: { top_k: 5, min_relevance: 0.4, max_tokens: 2000 } },
      ]),
    ),
    onServerStatus: vi.fn((h: (s: ServerStatus) => void) => {
      serverStatus = h;
      return Promise.resolve(() => undefined);
    }),
    onConversationRenamed: vi.fn((h: (r: ConversationRenamed) => void) => {
      renamed = h;
      return Promise.resolve(() => undefined);
    }),
  };
  return {
    ipc,
    emit: (e: TurnEvent) => act(() => emit(e)),
    finish: () => act(finish),
    serverStatus: (st: ServerStatus) => act(() => serverStatus(st)),
    renamed: (r: ConversationRenamed) => act(() => renamed(r)),
  };
}

describe("ChatPage", () => {
  it("carries on from a message in a new conversation it opens, and deletes an answer", async () => {
    const f = fakeIpc();
    renderIn(<ChatPage ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "First" }));
    expect(await screen.findByText("earlier answer")).toBeTruthy();
    fireEvent.click(screen.getByTestId("fork-message"));
    await waitFor(() => expect(f.ipc.getConversation).toHaveBeenLastCalledWith("c3", expect.anything()));
    expect(f.ipc.forkConversation).toHaveBeenCalledWith("c1", "a0");
    expect(screen.getAllByRole("button", { name: "First" })).toHaveLength(2);

    fireEvent.click(screen.getAllByRole("button", { name: "First" })[1]!);
    expect(await screen.findByText("earlier answer")).toBeTruthy();
    fireEvent.click(screen.getByTestId("delete-message"));
    fireEvent.click(within(screen.getByTestId("confirm-delete")).getByRole("button", { name: "Delete" }));
    await waitFor(() => expect(screen.queryByText("earlier answer")).toBeNull());
    expect(f.ipc.deleteMessage).toHaveBeenCalledWith("c1", "a0");
  });

  it("opens the conversation quick ask hands over, reloaded, and starts one for the tray's New chat", async () => {
    const f = fakeIpc();
    const { rerender } = renderIn(<ChatPage ipc={f.ipc} request={null} />);
    await waitFor(() => expect(f.ipc.listConversations).toHaveBeenCalledTimes(1));
    rerender(<ChatPage ipc={f.ipc} request={{ n: 1, open: "c1" }} />);
    expect(await screen.findByText("earlier answer")).toBeTruthy();
    expect(f.ipc.getConversation).toHaveBeenLastCalledWith("c1", expect.anything());
    await waitFor(() => expect(f.ipc.listConversations).toHaveBeenCalledTimes(2));
    // The same request again (a re-render) does nothing; a new one is done.
    rerender(<ChatPage ipc={f.ipc} request={{ n: 1, open: "c1" }} />);
    expect(f.ipc.createConversation).not.toHaveBeenCalled();
    const done = vi.fn();
    rerender(<ChatPage ipc={f.ipc} request={{ n: 2, open: null }} onRequestDone={done} />);
    await waitFor(() => expect(f.ipc.createConversation).toHaveBeenCalledTimes(1));
    expect(done).toHaveBeenCalledTimes(1);
    await waitFor(() => expect(f.ipc.getConversation).toHaveBeenLastCalledWith("c2", expect.anything()));
  });

  it("lets the views on screen tear down before their conversation or their messages go", async () => {
    const f = fakeIpc();
    f.ipc.getConversation = vi.fn((id: string) =>
      Promise.resolve({
        conversation: { id, title: "First", created_at: 1, updated_at: 1, snippet: null, pinned: false },
        messages: [message("u0", "user", "earlier question"), message("a0", "assistant", "earlier answer", { tool_calls: [trace({ call_id: "t-a0" })] })],
        earlier: 0,
        settings: { provider: null, model: null, servers: null, disabled_tools: [], assistant_id: null, system_prompt: null, reasoning: null },
      }),
    );
    const views = new LiveViews();
    let release = () => undefined as void;
    const leaveOld = views.add("t-old", () => new Promise<void>((r) => (release = r)));
    renderIn(
      <LiveViewsContext.Provider value={views}>
        <ChatPage ipc={f.ipc} />
      </LiveViewsContext.Provider>,
    );
    fireEvent.click(await screen.findByRole("button", { name: "First" }));
    await act(() => Promise.resolve());
    // The view shown still saves what it must: the conversation waits for it.
    expect(f.ipc.getConversation).not.toHaveBeenCalled();
    release();
    expect(await screen.findByText("earlier answer")).toBeTruthy();
    leaveOld();

    // Deleting the answer waits for the views of its tool calls, not for others.
    let releaseA0 = () => undefined as void;
    views.add("t-a0", () => new Promise<void>((r) => (releaseA0 = r)));
    views.add("t-elsewhere", () => new Promise<void>(() => undefined));
    fireEvent.click(screen.getByTestId("delete-message"));
    fireEvent.click(within(screen.getByTestId("confirm-delete")).getByRole("button", { name: "Delete" }));
    await act(() => Promise.resolve());
    expect(f.ipc.deleteMessage).not.toHaveBeenCalled();
    releaseA0();
    await waitFor(() => expect(f.ipc.deleteMessage).toHaveBeenCalledWith("c1", "a0"));
  });

  it("opens a conversation, streams a turn with an approved tool call, and stops it", async () => {
    const f = fakeIpc();
    renderIn(<ChatPage ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "First" }));
    expect(await screen.findByText("earlier answer")).toBeTruthy();

    const box = screen.getByLabelText("Message (Enter to send, Shift+Enter for a new line)");
    fireEvent.change(box, { target: { value: "read the file" } });
    fireEvent.keyDown(box, { key: "Enter" });
    expect(f.ipc.sendMessage).toHaveBeenCalledWith("c1", "read the file", [], expect.any(Function));
    // Until the turn settles, the composer offers Stop, not a second Send.
    expect(screen.queryByRole("button", { name: "Send" })).toBeNull();

    f.emit({ type: "turn_started", user_message: message("u1", "user", "read the file"), assistant_message_id: "a1", model: "gpt-test" });
    f.emit({ type: "text_delta", text: "Let me look." });
    f.emit({ type: "tool_call_started", call_id: "t1", server: "fs", tool: "read", arguments: { path: "/a" }, status: "running" });
    f.emit({ type: "approval_needed", call_id: "t1", server: "fs", tool: "read", arguments: { path: "/a" }, strict: false });
    expect(screen.getByText("Let me look.")).toBeTruthy();
    // A screen reader hears the request without moving the focus, and the answer's end later.
    expect(screen.getByTestId("announcer").textContent).toBe("Approval needed: fs · read");
    f.emit({ type: "tool_search", searchable: 48, sent: 3 });
    expect(screen.getByTestId("tool-search").textContent).toBe(
      "48 tools available through search (3 sent with each request)",
    );
    f.emit({ type: "context_trimmed", elided_tool_results: 2, dropped_messages: 1, context_window: 8192 });
    expect(screen.getByTestId("context-trimmed").textContent).toBe(
      "To fit the model's 8192-token context, 2 older tool results and 1 older messages were left out",
    );
    fireEvent.click(screen.getByTestId("approve-once"));
    expect(f.ipc.respondApproval).toHaveBeenCalledWith("t1", "allow_once");

    f.emit({ type: "tool_running", call_id: "t1" });
    f.emit({
      type: "tool_result",
      call_id: "t1",
      result: { content: [{ type: "text", text: "file body" }], structured_content: null, is_error: false, kept: { result: 1, chars: 12, lines: 1, sent_chars: 9 } },
      duration_ms: 250,
    });
    const card = screen.getByTestId("trace-card");
    expect(within(card).getByTestId("trace-status").textContent).toBe("Done");
    expect(within(card).getByTestId("trace-duration").textContent).toBe("250 ms");
    fireEvent.click(within(card).getByTestId("trace-toggle"));
    expect(within(card).getByText("file body")).toBeTruthy();
    // A result cut for the model: both sizes, and its whole text in the inspector.
    expect(within(card).getByTestId("trace-sizes").textContent).toContain("Sent to the model: 9 of 12 characters");
    fireEvent.click(within(card).getByTestId("trace-whole"));
    expect((await screen.findByTestId("inspector-kept-text")).textContent).toBe("file body!!!");
    expect(f.ipc.readKeptResult).toHaveBeenCalledWith("c1", 1, 0, 262144);
    fireEvent.keyDown(screen.getByTestId("trace-inspector"), { key: "Escape" });
    // The Escape that closed the dialog does not also stop the answer.
    await waitFor(() => expect(screen.queryByTestId("trace-inspector")).toBeNull());
    expect(f.ipc.cancelTurn).not.toHaveBeenCalled();

    fireEvent.click(screen.getByRole("button", { name: "Stop" }));
    expect(f.ipc.cancelTurn).toHaveBeenCalledWith("c1");
    f.emit({ type: "done", reason: "cancelled" });
    f.finish();
    await waitFor(() => expect(screen.getByRole("button", { name: "Send" })).toBeTruthy());
    // Stopped by the user: said so, not "complete".
    expect(screen.getByTestId("announcer").textContent).toBe("The answer was stopped.");
    // Once the turn is over the stored branch is reloaded.
    await waitFor(() => expect(f.ipc.getConversation).toHaveBeenCalledTimes(2));
  });

  it("heads a conversation with its title and exports it in either format, saying where it went", async () => {
    const { ipc } = fakeIpc();
    renderIn(<ChatPage ipc={ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "First" }));
    expect((await screen.findByRole("heading", { level: 2 })).textContent).toBe("First");
    expect(screen.queryByRole("status")).toBeNull();
    fireEvent.click(screen.getByRole("button", { name: "JSON (every branch)" }));
    expect(ipc.exportConversation).toHaveBeenCalledWith("c1", "json");
    expect((await screen.findByRole("status")).textContent).toBe("Saved to /tmp/x.md");
    // A cancelled save dialog saves nothing and says nothing new.
    vi.mocked(ipc.exportConversation).mockResolvedValueOnce(null);
    fireEvent.click(screen.getByRole("button", { name: "Markdown" }));
    expect(ipc.exportConversation).toHaveBeenLastCalledWith("c1", "markdown");
    await waitFor(() => expect(ipc.exportConversation).toHaveBeenCalledTimes(2));
    expect(screen.getByRole("status").textContent).toBe("Saved to /tmp/x.md");
  });

  it("gives a message refused before its turn began back to the composer, and shows why", async () => {
    const { ipc } = fakeIpc();
    vi.mocked(ipc.sendMessage).mockImplementationOnce(() =>
      Promise.reject({ kind: "invalid_input", message: "provider openai has no API key: set one in Settings → Providers" }),
    );
    renderIn(<ChatPage ipc={ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "First" }));
    await screen.findByText("earlier answer");
    const box = screen.getByLabelText("Message (Enter to send, Shift+Enter for a new line)") as HTMLTextAreaElement;
    fireEvent.change(box, { target: { value: "a long question I typed" } });
    fireEvent.keyDown(box, { key: "Enter" });
    await waitFor(() => expect(box.value).toBe("a long question I typed"));
    expect(screen.getByText(/has no API key/)).toBeTruthy();
    // Sent again and taken, it is not given back.
    fireEvent.keyDown(box, { key: "Enter" });
    expect(box.value).toBe("");
    expect(ipc.sendMessage).toHaveBeenCalledTimes(2);
  });

  it("opens a long conversation at its end and loads older messages on demand", async () => {
    const { ipc } = fakeIpc();
    renderIn(<ChatPage ipc={ipc} />);
    fireEvent.click(await screen.findByText("First"));
    await screen.findByText("earlier answer");
    expect(ipc.getConversation).toHaveBeenCalledWith("c1", 100);
    expect(screen.queryByText("first question")).toBeNull();
    fireEvent.click(screen.getByRole("button", { name: "Show 2 earlier messages" }));
    await screen.findByText("first question");
    expect(ipc.earlierMessages).toHaveBeenCalledWith("c1", "u0", 200);
    const rows = [...document.querySelectorAll("[data-message-id]")].map((e) => e.getAttribute("data-message-id"));
    expect(rows).toEqual(["u-1", "a-1", "u0", "a0"]);
    expect(screen.queryByTestId("load-earlier")).toBeNull();
  });

  it("guides a new user in three steps, each marked done as it is, and opens the settings each needs", async () => {
    const f = fakeIpc();
    f.ipc.listConversations = vi.fn(() => Promise.resolve([]));
    const onOpenSettings = vi.fn();
    const { unmount } = renderIn(<ChatPage ipc={f.ipc} onOpenSettings={onOpenSettings} />);
    fireEvent.click(await screen.findByRole("button", { name: "Add a provider" }));
    expect(onOpenSettings).toHaveBeenCalledWith("providers");
    const states = () => ["provider", "servers", "chat"].map((step) => screen.getByTestId(`step-${step}`).dataset.state);
    expect(states()).toEqual(["current", "todo", "todo"]);
    expect(screen.getByRole("listitem", { current: "step" }).textContent).toContain("Add a model provider");
    expect(screen.getByTestId("welcome-tools").textContent).toContain("No MCP tools are ready yet");
    expect((screen.getByTestId("welcome-new") as HTMLButtonElement).disabled).toBe(true);
    fireEvent.click(screen.getByRole("button", { name: "Import a config" }));
    expect(onOpenSettings).toHaveBeenLastCalledWith("import");
    fireEvent.click(screen.getByRole("button", { name: "Add servers" }));
    expect(onOpenSettings).toHaveBeenLastCalledWith("servers");
    await expectAccessible();
    unmount();

    // A provider: the servers are next; a server on: the first message is.
    f.ipc.listProviders = vi.fn(() => Promise.resolve([providerView("deepseek")]));
    renderIn(<ChatPage ipc={f.ipc} onOpenSettings={onOpenSettings} />);
    await waitFor(() => expect(states()).toEqual(["done", "current", "todo"]));
    f.serverStatus({ server: "builtin", state: "ready", tool_count: 2, error: null });
    expect(states()).toEqual(["done", "current", "todo"]);
    f.serverStatus({ server: "fs", state: "starting", tool_count: 0, error: null });
    expect(states()).toEqual(["done", "done", "current"]);
    fireEvent.click(screen.getByTestId("welcome-new"));
    await waitFor(() => expect(f.ipc.createConversation).toHaveBeenCalled());
  });

  it("welcomes a user with a provider with a new chat and the tools the model can use", async () => {
    const f = fakeIpc();
    f.ipc.listProviders = vi.fn(() => Promise.resolve([providerView("deepseek")]));
    f.ipc.listTools = vi.fn(() =>
      Promise.resolve([toolInfo("fs", "read"), toolInfo("fs", "write"), toolInfo("time", "now"), toolInfo("web", "fetch", { enabled: false })]),
    );
    renderIn(<ChatPage ipc={f.ipc} onOpenSettings={vi.fn()} />);
    await waitFor(() => expect(screen.getByTestId("welcome-tools").textContent).toBe("MCP tools the model can use: 3 (servers: 2)."));
    expect(screen.queryByRole("button", { name: "Add a provider" })).toBeNull();
    fireEvent.click(within(screen.getByTestId("welcome")).getByRole("button", { name: "New chat" }));
    await waitFor(() => expect(f.ipc.createConversation).toHaveBeenCalledWith(null));
    expect(await screen.findByText("Ask anything. Type / for MCP prompts.")).toBeTruthy();
    // The composer says which model "Default" is.
    expect(screen.getByRole("button", { name: "Model: Default: deepseek / deepseek-chat" }).textContent).toBe("Default: deepseek / deepseek-chat");
  });

  it("shows the tools' share of the model's context, and warns before a message that would not fit", async () => {
    const f = fakeIpc();
    f.ipc.listProviders = vi.fn(() => Promise.resolve([{ ...providerView("deepseek"), windows: { "deepseek-chat": 8000 } }]));
    f.ipc.listTools = vi.fn(() => Promise.resolve([toolInfo("fs", "read", { schema_tokens: 300 }), toolInfo("fs", "write", { schema_tokens: 300 })]));
    renderIn(<ChatPage ipc={f.ipc} onOpenSettings={vi.fn()} />);
    await waitFor(() => expect(screen.getByTestId("welcome-tools").textContent).toContain("2"));
    fireEvent.click(within(screen.getByTestId("welcome")).getByRole("button", { name: "New chat" }));
    const tools = await screen.findByRole("button", { name: /^Tools: 2/ });
    expect(tools.textContent).toBe("Tools: 2 (~600 tokens, 8% of the model's context)");
    expect(screen.queryByTestId("budget-warning")).toBeNull();

    // Past the 10% share the tools are found through search.
    f.ipc.listTools = vi.fn(() => Promise.resolve([toolInfo("fs", "read", { schema_tokens: 600 }), toolInfo("fs", "write", { schema_tokens: 600, pinned: true })]));
    f.serverStatus({ server: "fs", state: "ready", tool_count: 2, error: null });
    await waitFor(() => expect(tools.textContent).toBe("Tools: 2, found through search (all would take 15% of the model's context)"));

    // About 8,000 tokens of text, the pinned tool and the search tool: more than the window holds beside the answer's room.
    fireEvent.change(screen.getByLabelText("Message (Enter to send, Shift+Enter for a new line)"), { target: { value: "word ".repeat(4800) } });
    expect(screen.getByTestId("budget-warning").textContent).toBe(
      "This message, the tools and the knowledge-base context come to about 8800 tokens, more than the model's 8000-token context holds besides the 2000 kept for the answer: older messages will be left out and the answer may be cut short.",
    );
  });

  it("reloads the tools the composer offers when a server's status changes", async () => {
    const f = fakeIpc();
    renderIn(<ChatPage ipc={f.ipc} />);
    await waitFor(() => expect(f.ipc.listTools).toHaveBeenCalledTimes(1));
    f.serverStatus({ server: "fs", state: "ready", tool_count: 3, error: null });
    await waitFor(() => expect(f.ipc.listTools).toHaveBeenCalledTimes(2));
    expect(f.ipc.listPrompts).toHaveBeenCalledTimes(2);
  });

  it("says which servers are starting or failed, as their statuses change, and opens a failed one's settings", async () => {
    const f = fakeIpc();
    f.ipc.listServers = vi.fn(() =>
      Promise.resolve([serverView("fs", "ready"), serverView("fetch", "failed", "not found on PATH"), serverView("time", "starting"), serverView("off", "stopped")]),
    );
    const onOpenSettings = vi.fn();
    renderIn(<ChatPage ipc={f.ipc} onOpenSettings={onOpenSettings} />);
    const welcome = await screen.findByTestId("welcome");
    // Servers are set up: none to add, only none ready yet.
    await waitFor(() => expect(screen.getByTestId("welcome-tools").textContent).toBe("No MCP tools are ready yet."));
    expect((await within(welcome).findByTestId("servers-starting")).textContent).toBe("Starting the MCP server time… Its tools come when it is ready.");
    const failed = within(welcome).getByTestId("server-failed");
    expect([failed.textContent, failed.title]).toEqual(["fetch failed: see why", "not found on PATH"]);
    fireEvent.click(failed);
    expect(onOpenSettings).toHaveBeenCalledWith("servers", "fetch");

    // Above the composer too, following the servers' events.
    fireEvent.click(screen.getByRole("button", { name: "First" }));
    await screen.findByText("earlier answer");
    f.serverStatus({ server: "fs", state: "restarting", tool_count: 0, error: null });
    expect(screen.getByTestId("servers-starting").textContent).toBe("Starting MCP servers: fs, time… Their tools come when they are ready.");
    f.serverStatus({ server: "time", state: "ready", tool_count: 1, error: null });
    f.serverStatus({ server: "fs", state: "ready", tool_count: 3, error: null });
    f.serverStatus({ server: "fetch", state: "starting", tool_count: 0, error: null });
    f.serverStatus({ server: "fetch", state: "ready", tool_count: 2, error: null });
    expect(screen.queryByTestId("server-health")).toBeNull();
  });

  it("creates a conversation with Ctrl+N, from the chosen assistant", async () => {
    const f = fakeIpc();
    renderIn(<ChatPage ipc={f.ipc} />);
    await screen.findByRole("button", { name: "First" });
    fireEvent.keyDown(window, { key: "n", ctrlKey: true });
    await waitFor(() => expect(f.ipc.createConversation).toHaveBeenCalledWith(null));
    fireEvent.change(await screen.findByLabelText("Assistant for new chats"), { target: { value: "as1" } });
    fireEvent.click(screen.getByRole("button", { name: "New chat" }));
    await waitFor(() => expect(f.ipc.createConversation).toHaveBeenLastCalledWith("as1"));
    expect(await screen.findByText("Ask anything. Type / for MCP prompts.")).toBeTruthy();
  });

  it("keeps a turn streaming and the open conversation while the page is away", async () => {
    const f = fakeIpc();
    const stores = new ChatStores();
    const first = renderIn(<ChatPage ipc={f.ipc} stores={stores} />);
    fireEvent.click(await screen.findByRole("button", { name: "First" }));
    await screen.findByText("earlier answer");
    const box = screen.getByLabelText("Message (Enter to send, Shift+Enter for a new line)");
    fireEvent.change(box, { target: { value: "long task" } });
    fireEvent.keyDown(box, { key: "Enter" });
    f.emit({ type: "turn_started", user_message: message("u1", "user", "long task"), assistant_message_id: "a1", model: "m" });
    first.unmount();
    f.emit({ type: "text_delta", text: "written while away" });
    renderIn(<ChatPage ipc={f.ipc} stores={stores} />);
    expect(await screen.findByText("written while away")).toBeTruthy();
    expect(screen.getByRole("button", { name: "Stop" })).toBeTruthy();
    // The list is not a live region (it would read every token): the finished answer is said once.
    expect(screen.getByRole("log").getAttribute("aria-live")).toBe("off");
    f.emit({ type: "done", reason: "stop" });
    f.finish();
    await waitFor(() => expect(screen.getByTestId("announcer").textContent).toBe("The answer is complete: written while away"));
  });

  it("keeps each conversation's unsent message while another conversation or the page is open", async () => {
    const f = fakeIpc();
    const stores = new ChatStores();
    const label = "Message (Enter to send, Shift+Enter for a new line)";
    const first = renderIn(<ChatPage ipc={f.ipc} stores={stores} />);
    fireEvent.click(await screen.findByRole("button", { name: "First" }));
    await screen.findByText("earlier answer");
    fireEvent.change(screen.getByLabelText(label), { target: { value: "half a thought" } });
    fireEvent.keyDown(window, { key: "n", ctrlKey: true });
    await screen.findByText("Ask anything. Type / for MCP prompts.");
    expect((screen.getByLabelText(label) as HTMLTextAreaElement).value).toBe("");
    fireEvent.change(screen.getByLabelText(label), { target: { value: "the new chat's draft" } });
    fireEvent.click(screen.getByRole("button", { name: "First" }));
    await screen.findByText("earlier answer");
    expect((screen.getByLabelText(label) as HTMLTextAreaElement).value).toBe("half a thought");
    first.unmount();
    renderIn(<ChatPage ipc={f.ipc} stores={stores} />);
    await screen.findByText("earlier answer");
    const box = screen.getByLabelText(label) as HTMLTextAreaElement;
    expect(box.value).toBe("half a thought");
    fireEvent.keyDown(box, { key: "Enter" });
    await waitFor(() => expect(f.ipc.sendMessage).toHaveBeenCalled());
    expect(stores.get("c1").draft.text).toBe("");
    expect(stores.get("c2").draft.text).toBe("the new chat's draft");
    expect(f.ipc.discardConversationIfUnused).not.toHaveBeenCalled();
  });

  it("drops a new chat left before anything was sent or typed in it, and keeps one that was used", async () => {
    const f = fakeIpc();
    renderIn(<ChatPage ipc={f.ipc} />);
    const rows = () => screen.getByTestId("conversation-list").querySelectorAll("li:not(.conversation-group)").length;
    await screen.findByRole("button", { name: "First" });
    fireEvent.keyDown(window, { key: "n", ctrlKey: true });
    await screen.findByText("Ask anything. Type / for MCP prompts.");
    expect(rows()).toBe(2);
    fireEvent.click(screen.getByRole("button", { name: "First" }));
    await waitFor(() => expect(f.ipc.discardConversationIfUnused).toHaveBeenCalledWith("c2"));
    await waitFor(() => expect(rows()).toBe(1));
    // An old conversation is never offered to be discarded.
    fireEvent.keyDown(window, { key: "n", ctrlKey: true });
    await screen.findByText("Ask anything. Type / for MCP prompts.");
    expect(f.ipc.discardConversationIfUnused).toHaveBeenCalledTimes(1);
    // Nor a new one whose first message is on its way (its turn has not started yet).
    const box = screen.getByLabelText("Message (Enter to send, Shift+Enter for a new line)");
    fireEvent.change(box, { target: { value: "a first question" } });
    fireEvent.keyDown(box, { key: "Enter" });
    expect(f.ipc.sendMessage).toHaveBeenCalled();
    fireEvent.click(screen.getByRole("button", { name: "First" }));
    await screen.findByText("earlier answer");
    expect(f.ipc.discardConversationIfUnused).toHaveBeenCalledTimes(1);
  });

  it("gives a conversation instructions of its own, and takes them away again", async () => {
    const f = fakeIpc();
    renderIn(<ChatPage ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "First" }));
    await screen.findByText("earlier answer");
    const button = screen.getByRole("button", { name: "Instructions" });
    expect(button.getAttribute("aria-pressed")).toBe("false");
    fireEvent.click(button);
    const dialog = screen.getByRole("dialog", { name: "Instructions" });
    fireEvent.change(within(dialog).getByLabelText("Instructions"), { target: { value: "Answer in French." } });
    fireEvent.click(within(dialog).getByRole("button", { name: "Save" }));
    await waitFor(() =>
      expect(f.ipc.updateConversationSettings).toHaveBeenLastCalledWith("c1", expect.objectContaining({ system_prompt: "Answer in French." })),
    );
    expect(screen.queryByRole("dialog")).toBeNull();
    expect(button.getAttribute("aria-pressed")).toBe("true");

    fireEvent.click(button);
    const again = screen.getByRole("dialog", { name: "Instructions" });
    const box = within(again).getByLabelText("Instructions") as HTMLTextAreaElement;
    expect(box.value).toBe("Answer in French.");
    fireEvent.change(box, { target: { value: "  " } });
    fireEvent.click(within(again).getByRole("button", { name: "Save" }));
    await waitFor(() => expect(f.ipc.updateConversationSettings).toHaveBeenLastCalledWith("c1", expect.objectContaining({ system_prompt: null })));
    expect(button.getAttribute("aria-pressed")).toBe("false");
  });

  it("shows the title the model gave a conversation in the sidebar and the header", async () => {
    const f = fakeIpc();
    renderIn(<ChatPage ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "First" }));
    await screen.findByText("earlier answer");
    await f.renamed({ id: "c1", title: "Tides explained" });
    expect(await screen.findByRole("button", { name: "Tides explained" })).toBeTruthy();
    expect(screen.queryByRole("button", { name: "First" })).toBeNull();
    expect(screen.getByRole("heading", { name: "Tides explained" })).toBeTruthy();
  });

  it("searches conversations in full text once typing pauses", async () => {
    const f = fakeIpc();
    renderIn(<ChatPage ipc={f.ipc} />);
    await screen.findByRole("button", { name: "First" });
    fireEvent.change(screen.getByLabelText("Search conversations"), { target: { value: "r" } });
    fireEvent.change(screen.getByLabelText("Search conversations"), { target: { value: "rust " } });
    await waitFor(() => expect(f.ipc.listConversations).toHaveBeenLastCalledWith("rust"));
    expect(f.ipc.listConversations).not.toHaveBeenCalledWith("r");
  });

  it("shows a failed turn as a readable error with the action to take", async () => {
    const f = fakeIpc();
    f.ipc.sendMessage = vi.fn(() => Promise.reject({ kind: "provider", message: "401 Unauthorized: invalid API key" }));
    renderIn(<ChatPage ipc={f.ipc} />);
    fireEvent.click(await screen.findByRole("button", { name: "First" }));
    await screen.findByText("earlier answer");
    const box = screen.getByLabelText("Message (Enter to send, Shift+Enter for a new line)");
    fireEvent.change(box, { target: { value: "hi" } });
    fireEvent.keyDown(box, { key: "Enter" });
    const alert = await screen.findByRole("alert");
    expect(alert.textContent).toContain("The model provider failed: 401 Unauthorized: invalid API key");
    expect(alert.textContent).toContain("Settings → Providers");
  });
});
