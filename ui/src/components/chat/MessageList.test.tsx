import { act, cleanup, fireEvent, screen, waitFor, within } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { Message } from "../../lib/ipc";
import { LiveViews, LiveViewsContext, ViewCommands, type ViewIpc } from "../../lib/mcpApps";
import { ToolCatalogue, toolMap } from "../../lib/toolCatalogue";
import { message, renderIn, toolInfo, trace } from "../../test/render";
import { estimateHeight, LIVE_VIEW_ROWS, MessageList } from "./MessageList";
import type { MessageActions } from "./MessageView";
import { expectAccessible } from "../../test/axe";

afterEach(cleanup);

function actions(): MessageActions {
  return { onDecide: vi.fn(), onInspect: vi.fn(), onRegenerate: vi.fn(), onEdit: vi.fn(), onSwitchBranch: vi.fn(), onDelete: vi.fn(), onFork: vi.fn() };
}

describe("MessageList", () => {
  it("renders only a window of a 10,000-message conversation", () => {
    const messages: Message[] = Array.from({ length: 10_000 }, (_, i) => message(`m${i}`, i % 2 ? "assistant" : "user", `message ${i}`));
    const { container } = renderIn(<MessageList messages={messages} streamingId={null} actions={actions()} initialRect={{ width: 800, height: 600 }} />);
    const rows = container.querySelectorAll("[data-message-id]");
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.length).toBeLessThan(40);
  });

  it("opens at the end: the first render holds the last messages, not the first", () => {
    const messages: Message[] = Array.from({ length: 100 }, (_, i) => message(`m${i}`, i % 2 ? "assistant" : "user", `message ${i}`));
    const { container } = renderIn(<MessageList messages={messages} streamingId={null} actions={actions()} initialRect={{ width: 800, height: 600 }} />);
    const ids = [...container.querySelectorAll<HTMLElement>("[data-message-id]")].map((e) => e.dataset.messageId);
    expect(ids).toContain("m99");
    expect(ids).not.toContain("m0");
    // The rows that fit in 600 px, plus the overscan above them.
    expect(ids.length).toBeLessThanOrEqual(Math.ceil(600 / estimateHeight(messages[0] as Message)) + 2);
  });

  it("keeps the latest rows with a tool's view rendered when scrolled away, so the views keep their state", () => {
    const show = toolInfo("counter", "show", { view: { resource_uri: "ui://counter/view.html", for_model: true, for_app: true } });
    const plain = toolInfo("counter", "plain");
    const call = (id: string, tool: string, status: "done" | "denied") => [trace({ call_id: id, server: "counter", tool, status })];
    const messages: Message[] = Array.from({ length: 100 }, (_, i) => message(`m${i}`, i % 2 ? "assistant" : "user", `message ${i}`));
    // Rows 10..19 called the tool with a view, row 20 a tool without one, row 21 the view's tool but was denied.
    for (let i = 10; i < 20; i++) messages[i] = message(`m${i}`, "assistant", `view ${i}`, { tool_calls: call(`c${i}`, "show", "done") });
    messages[20] = message("m20", "assistant", "plain", { tool_calls: call("c20", "plain", "done") });
    messages[21] = message("m21", "assistant", "denied", { tool_calls: call("c21", "show", "denied") });
    const views = { openAppView: vi.fn(() => new Promise(() => undefined)) } as unknown as ViewIpc;
    const { container } = renderIn(
      <ViewCommands.Provider value={views}>
        <ToolCatalogue.Provider value={toolMap([show, plain])}>
          <MessageList messages={messages} streamingId={null} actions={actions()} initialRect={{ width: 800, height: 600 }} />
        </ToolCatalogue.Provider>
      </ViewCommands.Provider>,
    );
    const ids = [...container.querySelectorAll<HTMLElement>("[data-message-id]")].map((e) => e.dataset.messageId);
    // The list shows its end (jsdom measures every row alike, so not to the last pixel)…
    expect(ids.filter((id) => Number(id?.slice(1)) >= 90).length).toBeGreaterThan(3);
    // …and keeps the latest rows with a view, only those, far above it.
    const kept = Array.from({ length: LIVE_VIEW_ROWS }, (_, k) => `m${20 - LIVE_VIEW_ROWS + k}`);
    expect(ids.filter((id) => Number(id?.slice(1)) < 80)).toEqual(kept);
    expect(container.querySelectorAll("[data-testid=app-view]")).toHaveLength(LIVE_VIEW_ROWS);
  });

  it("holds a row that drops out of the latest with views until its view tore down", async () => {
    const show = toolInfo("counter", "show", { view: { resource_uri: "ui://counter/view.html", for_model: true, for_app: true } });
    const messages: Message[] = Array.from({ length: 100 }, (_, i) => message(`m${i}`, i % 2 ? "assistant" : "user", `message ${i}`));
    const withView = (i: number) => message(`m${i}`, "assistant", `view ${i}`, { tool_calls: [trace({ call_id: `c${i}`, server: "counter", tool: "show", status: "done" })] });
    for (let i = 10; i < 10 + LIVE_VIEW_ROWS; i++) messages[i] = withView(i);
    const live = new LiveViews();
    let release = () => undefined as void;
    live.add("c10", () => new Promise<void>((r) => (release = r)));
    const ipc = { openAppView: vi.fn(() => new Promise(() => undefined)) } as unknown as ViewIpc;
    const list = (ms: Message[]) => (
      <LiveViewsContext.Provider value={live}>
        <ViewCommands.Provider value={ipc}>
          <ToolCatalogue.Provider value={toolMap([show])}>
            <MessageList messages={ms} streamingId={null} actions={actions()} initialRect={{ width: 800, height: 600 }} />
          </ToolCatalogue.Provider>
        </ViewCommands.Provider>
      </LiveViewsContext.Provider>
    );
    const { container, rerender } = renderIn(list(messages));
    const shown = () => [...container.querySelectorAll<HTMLElement>("[data-message-id]")].map((e) => e.dataset.messageId);
    expect(shown()).toContain("m10");
    // A newer call with a view: m10 is no longer among the latest, but its view is still saving.
    const more = [...messages, withView(100)];
    rerender(list(more));
    await act(() => Promise.resolve());
    expect(shown()).toContain("m10");
    expect(shown()).toContain("m11");
    act(() => release());
    await waitFor(() => expect(shown()).not.toContain("m10"));
    expect(shown()).toContain("m11");
  });

  it("shows what the user attached: a picture as it is, a text file folded under its name", () => {
    const question = message("u1", "user", "what are these?", {
      parts: [
        { type: "image", mime_type: "image/png", data: "iVBORw==" },
        { type: "text", text: "notes.md\n\n# Notes\nsquares are red" },
      ],
    });
    renderIn(<MessageList messages={[question]} streamingId={null} actions={actions()} />);
    expect((screen.getByRole("img", { name: "Attached image" }) as HTMLImageElement).src).toBe("data:image/png;base64,iVBORw==");
    expect(estimateHeight(question)).toBe(estimateHeight({ ...question, parts: [] }) + 240 + 32);
    const file = screen.getByTestId("attached-text") as HTMLDetailsElement;
    expect(file.open).toBe(false);
    expect(file.querySelector("summary")?.textContent).toBe("notes.md");
    expect(file.querySelector("pre")?.textContent).toBe("# Notes\nsquares are red");
  });

  it("says what kind of failure ended an answer, and what to do, in the window's language", () => {
    const limit = { kind: "limit" as const, message: "Stopped after 25 model requests." };
    const answer = message("a1", "assistant", "partial", { error: limit });
    const { unmount } = renderIn(<MessageList messages={[answer]} streamingId={null} actions={actions()} />);
    expect(screen.getByRole("alert").textContent).toBe(
      "The answer stopped at a limit: Stopped after 25 model requests.Nothing was lost: send another message to let the model go on from here.",
    );
    unmount();
    const failed = message("a1", "assistant", "", { error: { kind: "provider", message: "HTTP 401" } });
    renderIn(<MessageList messages={[failed]} streamingId={null} actions={actions()} />, "zh");
    expect(screen.getByRole("alert").textContent).toContain("模型服务商出错：HTTP 401");
  });

  it("shows reasoning as a collapsible block, open while thinking", () => {
    const a = actions();
    const thinking = message("a1", "assistant", "", { reasoning: "step 1" });
    const { rerender } = renderIn(<MessageList messages={[thinking]} streamingId="a1" actions={a} />);
    const details = screen.getByTestId("reasoning") as HTMLDetailsElement;
    expect(details.open).toBe(true);
    expect(screen.getByText("Thinking…")).toBeTruthy();
    rerender(<MessageList messages={[{ ...thinking, text: "answer" }]} streamingId={null} actions={a} />);
    expect((screen.getByTestId("reasoning") as HTMLDetailsElement).open).toBe(false);
    expect(screen.getByText("Reasoning")).toBeTruthy();
  });

  it("deletes a message only once the user confirms, and not while it streams", () => {
    const a = actions();
    const msgs = [message("u1", "user", "question"), message("a1", "assistant", "answer", { parent_id: "u1" })];
    const { rerender } = renderIn(<MessageList messages={msgs} streamingId={null} actions={a} />);
    fireEvent.click(screen.getByTestId("delete-message"));
    expect(screen.getByTestId("confirm-delete").textContent).toContain("Delete this message and every reply after it?");
    fireEvent.click(screen.getByRole("button", { name: "Cancel" }));
    expect(screen.queryByTestId("confirm-delete")).toBeNull();
    expect(a.onDelete).not.toHaveBeenCalled();
    fireEvent.click(screen.getByTestId("delete-message"));
    fireEvent.click(within(screen.getByTestId("confirm-delete")).getByRole("button", { name: "Delete" }));
    expect(a.onDelete).toHaveBeenCalledWith(msgs[1]);
    rerender(<MessageList messages={msgs} streamingId="a1" actions={a} />);
    fireEvent.pointerEnter(screen.getByTestId("message-user"));
    // The question's actions, not the streaming answer's.
    expect(within(screen.getByTestId("message-user")).getByTestId("delete-message")).toBeTruthy();
    expect(within(screen.getByTestId("message-assistant")).queryByTestId("delete-message")).toBeNull();
  });

  it("draws a message's actions on the newest one and on the one pointed at or focused, keeping their room", () => {
    const msgs = [message("u1", "user", "question"), message("a1", "assistant", "answer", { parent_id: "u1" })];
    renderIn(<MessageList messages={msgs} streamingId={null} actions={actions()} />);
    const question = screen.getByTestId("message-user");
    const drawn = () => screen.getAllByRole("group", { name: "Message actions" }).length;
    expect(within(screen.getByTestId("message-assistant")).getByTestId("copy-message")).toBeTruthy();
    expect(within(question).queryByRole("button")).toBeNull();
    expect(question.querySelector(".message-actions")).not.toBeNull();
    fireEvent.pointerEnter(question);
    expect(drawn()).toBe(2);
    fireEvent.pointerLeave(question);
    expect(drawn()).toBe(1);
    // The keyboard reaches them: the message is a named, focusable article.
    expect(question.getAttribute("role")).toBe("article");
    expect(question.tabIndex).toBe(0);
    expect(question.getAttribute("aria-label")).toMatch(/^You, /);
    fireEvent.focus(question);
    expect(within(question).getByTestId("edit-message")).toBeTruthy();
    // Focus moving within the message keeps them; leaving it takes them away.
    fireEvent.blur(question, { relatedTarget: within(question).getByTestId("edit-message") });
    expect(drawn()).toBe(2);
    fireEvent.blur(question, { relatedTarget: document.body });
    expect(drawn()).toBe(1);
    // The window losing the focus (no related target, the document's focus kept) keeps them,
    // so the focus has somewhere to come back to.
    fireEvent.focus(question);
    within(question).getByTestId("edit-message").focus();
    fireEvent.blur(question, { relatedTarget: null });
    expect(drawn()).toBe(2);
    // Delete's confirmation answered Cancel gives the focus back to Delete.
    fireEvent.click(within(question).getByTestId("delete-message"));
    fireEvent.click(within(question).getByRole("button", { name: "Cancel" }));
    expect(document.activeElement).toBe(within(question).getByTestId("delete-message"));
  });

  it("switches between sibling branches and offers regenerate and edit", () => {
    const a = actions();
    const msgs = [
      message("u1", "user", "question", { siblings: ["u0", "u1", "u2"] }),
      message("a1", "assistant", "answer", { parent_id: "u1" }),
    ];
    renderIn(<MessageList messages={msgs} streamingId={null} actions={a} />);
    expect(screen.getByTestId("branch-switcher").textContent).toContain("2/3");
    fireEvent.click(screen.getByRole("button", { name: "Next version" }));
    fireEvent.click(screen.getByRole("button", { name: "Previous version" }));
    expect(a.onSwitchBranch).toHaveBeenNthCalledWith(1, "u2");
    expect(a.onSwitchBranch).toHaveBeenNthCalledWith(2, "u0");
    fireEvent.click(screen.getByTestId("regenerate"));
    expect(a.onRegenerate).toHaveBeenCalledWith(msgs[1]);
    fireEvent.click(screen.getByRole("button", { name: "New chat from here" }));
    expect(a.onFork).toHaveBeenCalledWith(msgs[1]);
    fireEvent.focus(screen.getByTestId("message-user"));
    fireEvent.click(screen.getByTestId("edit-message"));
    fireEvent.change(screen.getByLabelText("Edit message"), { target: { value: "better question" } });
    fireEvent.click(screen.getByRole("button", { name: "Save and resend" }));
    expect(a.onEdit).toHaveBeenCalledWith(msgs[0], "better question");
  });

  it("names an icon button's open tooltip", async () => {
    renderIn(<MessageList messages={[message("a1", "assistant", "hi")]} streamingId={null} actions={actions()} />);
    const copy = screen.getByTestId("copy-message");
    fireEvent.focus(copy);
    const tip = await screen.findByRole("tooltip");
    expect(tip.textContent).toBe("Copy");
    // axe's aria-tooltip-name: a tooltip must have a name (the real window found one without).
    await expectAccessible();
  });

  it("says when each message was written, and that its text was copied", async () => {
    const writeText = vi.fn(() => Promise.resolve());
    Object.defineProperty(navigator, "clipboard", { value: { writeText }, configurable: true });
    const now = Date.now();
    const messages = [{ ...message("m1", "user", "hello"), created_at: now }, { ...message("m2", "assistant", "hi there"), created_at: Date.UTC(2020, 0, 2, 3, 4) }];
    renderIn(<MessageList messages={messages} streamingId={null} actions={actions()} initialRect={{ width: 800, height: 600 }} />);
    const [today, older] = screen.getAllByTestId("message-time");
    expect(today!.textContent).toMatch(/^\d\d:\d\d$/);
    expect(today!.getAttribute("datetime")).toBe(new Date(now).toISOString());
    expect(older!.textContent).toContain("2020");
    expect(older!.getAttribute("title")).toContain("January 2020");
    await expectAccessible();
    const copy = within(screen.getAllByTestId("message-assistant")[0]!).getByTestId("copy-message");
    fireEvent.click(copy);
    expect(writeText).toHaveBeenCalledWith("hi there");
    // The icon button's name (and tooltip) says so.
    expect(await within(screen.getAllByTestId("message-assistant")[0]!).findByRole("button", { name: "Copied" })).toBe(copy);
    Object.defineProperty(navigator, "clipboard", { value: undefined, configurable: true });
  });

  it("offers a way back to the latest message once the user scrolls up, and goes there", () => {
    const messages: Message[] = Array.from({ length: 50 }, (_, i) => message(`m${i}`, i % 2 ? "assistant" : "user", `message ${i}`));
    renderIn(<MessageList messages={messages} streamingId={null} actions={actions()} initialRect={{ width: 800, height: 600 }} />);
    const list = screen.getByTestId("message-list");
    const scrolled = (top: number) => {
      for (const [key, value] of Object.entries({ scrollHeight: 6000, clientHeight: 600, scrollTop: top })) {
        Object.defineProperty(list, key, { value, configurable: true, writable: true });
      }
      fireEvent.scroll(list);
    };
    scrolled(5400);
    expect(screen.queryByTestId("jump-latest")).toBeNull();
    scrolled(3000);
    fireEvent.click(screen.getByTestId("jump-latest"));
    expect(screen.queryByTestId("jump-latest")).toBeNull();
    scrolled(3000);
    expect(screen.getByTestId("jump-latest").textContent).toBe("↓ Latest");
    scrolled(5390);
    expect(screen.queryByTestId("jump-latest")).toBeNull();
  });

  it("stays where the user scrolled while a reply arrives, and goes to the end for a message the user sends", async () => {
    const messages: Message[] = Array.from({ length: 50 }, (_, i) => message(`m${i}`, i % 2 ? "assistant" : "user", `message ${i}`));
    const { rerender } = renderIn(<MessageList messages={messages} streamingId={null} actions={actions()} initialRect={{ width: 800, height: 600 }} />);
    const list = screen.getByTestId("message-list");
    for (const [key, value] of Object.entries({ scrollHeight: 6000, clientHeight: 600, scrollTop: 3000 })) {
      Object.defineProperty(list, key, { value, configurable: true, writable: true });
    }
    fireEvent.scroll(list);
    const scrollTo = vi.fn();
    list.scrollTo = scrollTo;
    const more = [...messages, message("m50", "assistant", "a reply")];
    rerender(<MessageList messages={more} streamingId={null} actions={actions()} initialRect={{ width: 800, height: 600 }} />);
    await new Promise((r) => setTimeout(r, 50));
    expect(scrollTo).not.toHaveBeenCalled();
    // The user's message arrives with the start of its reply.
    const sent = [...more, message("m51", "user", "sent"), message("m52", "assistant", "")];
    rerender(<MessageList messages={sent} streamingId="m52" actions={actions()} initialRect={{ width: 800, height: 600 }} />);
    await waitFor(() => expect(scrollTo).toHaveBeenCalled());
  });

  it("hides message actions while a reply streams", () => {
    renderIn(<MessageList messages={[message("a1", "assistant", "partial")]} streamingId="a1" actions={actions()} />);
    expect(screen.queryByTestId("regenerate")).toBeNull();
  });

  it("shows citations as numbered chips that open the passage", async () => {
    const m = message("a1", "assistant", "See [1].", {
      citations: [{ index: 1, origin: null, document: "guide.md", path: "/kb/guide.md", relevance: 0.82, text: "The passage text.", marks: [[4, 11]], heading: "Guide > Setup", lines: [3, 9] }],
    });
    renderIn(<MessageList messages={[m]} streamingId={null} actions={actions()} />);
    const chip = screen.getByTestId("citation-chip");
    // The heading the passage sits under tells passages of one document apart.
    expect(chip.textContent).toBe("[1] guide.md › Setup");
    expect(screen.queryByTestId("citation-passage")).toBeNull();
    fireEvent.click(chip);
    expect(screen.getByTestId("citation-passage").textContent).toContain("The passage text.");
    expect(screen.getByTestId("citation-passage").querySelector("mark")?.textContent, "the question's word is marked").toBe("passage");
    expect(screen.getByTestId("citation-passage").querySelector("footer")?.textContent).toBe("Guide > Setup · /kb/guide.md · lines 3–9 · relevance 0.82");
    expect(chip.getAttribute("aria-expanded")).toBe("true");
    fireEvent.click(chip);
    expect(screen.queryByTestId("citation-passage")).toBeNull();
    // The [1] marker in the answer (once the markdown renderer is loaded) opens the same passage.
    const marker = await screen.findByTestId("cite-marker", {}, { timeout: 15_000 });
    expect(marker.textContent).toBe("[1]");
    fireEvent.click(marker);
    expect(screen.getByTestId("citation-passage").textContent).toContain("The passage text.");
  });

  it("names a remote source's passages by their source, and a source that gave nothing", () => {
    const remote = { index: 1, origin: "Team RAGFlow", document: "handbook.pdf", path: "handbook.pdf", relevance: null, text: "Remote text.", marks: [], heading: null, lines: null };
    const m = message("a1", "assistant", "See [1].", {
      citations: [remote],
      unavailable: [{ name: "Archive", why: "the knowledge source timed out after 8s" }],
    });
    renderIn(<MessageList messages={[m]} streamingId={null} actions={actions()} />, "zh");
    const chip = screen.getByTestId("citation-chip");
    expect(chip.textContent).toBe("[1] Team RAGFlow · handbook.pdf");
    fireEvent.click(chip);
    // Cited by an older Patchbay: no relevance is claimed.
    expect(screen.getByTestId("citation-passage").querySelector("footer")?.textContent).toBe("Team RAGFlow · handbook.pdf");
    expect(screen.getByTestId("citation-unavailable").textContent).toBe("Archive：没有结果（the knowledge source timed out after 8s）");
  });

  it("shows the citations row for a source that failed when no passage was found", () => {
    const m = message("a1", "assistant", "I found nothing.", { unavailable: [{ name: "Archive", why: "HTTP 502" }] });
    renderIn(<MessageList messages={[m]} streamingId={null} actions={actions()} />);
    expect(screen.queryByTestId("citation-chip")).toBeNull();
    expect(screen.getByTestId("citation-unavailable").textContent).toBe("Archive: no passages (HTTP 502)");
  });
});
