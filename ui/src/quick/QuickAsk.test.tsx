import { act, cleanup, fireEvent, screen, waitFor } from "@testing-library/react";
import { afterEach, describe, expect, it, vi } from "vitest";
import type { ServerRequest, TurnEvent } from "../lib/ipc";
import { expectAccessible } from "../test/axe";
import { message, renderIn } from "../test/render";
import { QuickAsk, type QuickAskIpc } from "./QuickAsk";

afterEach(cleanup);

/** A fake backend whose turn streams the events the test pushes through `emit`. */
function fake() {
  let emit: (e: TurnEvent) => void = () => undefined;
  let finish: () => void = () => undefined;
  let shown: () => void = () => undefined;
  let request: (r: ServerRequest) => void = () => undefined;
  const ipc = {
    createConversation: vi.fn(() => Promise.resolve({ id: "c7", title: "New conversation", created_at: 0, updated_at: 0, snippet: null, pinned: false })),
    sendMessage: vi.fn((_id: string, _text: string, _a: unknown, onEvent: (e: TurnEvent) => void) => {
      emit = onEvent;
      return new Promise<{ assistant_message_id: string }>((resolve) => {
        finish = () => resolve({ assistant_message_id: "a1" });
      });
    }),
    cancelTurn: vi.fn(() => Promise.resolve()),
    respondApproval: vi.fn(() => Promise.resolve()),
    hideQuickAsk: vi.fn(() => Promise.resolve()),
    quickAskReady: vi.fn(() => Promise.resolve()),
    openLink: vi.fn(() => Promise.resolve()),
    openInMain: vi.fn(() => Promise.resolve()),
    onQuickAskShown: vi.fn((h: () => void) => {
      shown = h;
      return Promise.resolve(() => undefined);
    }),
    onServerRequest: vi.fn((h: (r: ServerRequest) => void) => {
      request = h;
      return Promise.resolve(() => undefined);
    }),
    onServerRequestEnded: vi.fn(() => Promise.resolve(() => undefined)),
    waitingServerRequests: vi.fn(() => Promise.resolve([])),
    respondServerRequest: vi.fn(() => Promise.resolve()),
  } satisfies QuickAskIpc;
  return {
    ipc,
    emit: (e: TurnEvent) => act(() => emit(e)),
    finish: () => act(() => finish()),
    show: () => shown(),
    request: (r: ServerRequest) => act(() => request(r)),
  };
}

describe("QuickAsk", () => {
  it("sends the question with Enter in a new conversation, streams the answer and its tool calls, and asks for approval", async () => {
    const f = fake();
    renderIn(<QuickAsk ipc={f.ipc} />);
    const field = screen.getByRole("textbox", { name: "Quick ask" });
    expect(document.activeElement).toBe(field);
    // The window shows once the field can take the first key.
    expect(f.ipc.quickAskReady).toHaveBeenCalledTimes(1);
    fireEvent.change(field, { target: { value: "What is 2+3?" } });
    fireEvent.keyDown(field, { key: "Enter" });
    await waitFor(() => expect(f.ipc.sendMessage).toHaveBeenCalled());
    expect(f.ipc.createConversation).toHaveBeenCalledWith(null);
    expect(f.ipc.sendMessage.mock.calls[0]!.slice(0, 2)).toEqual(["c7", "What is 2+3?"]);
    expect((field as HTMLTextAreaElement).value).toBe("");

    f.emit({ type: "turn_started", user_message: message("u1", "user", "What is 2+3?"), assistant_message_id: "a1", model: "m" });
    f.emit({ type: "tool_call_started", call_id: "k1", server: "everything", tool: "get-sum", arguments: { a: 2, b: 3 }, status: "pending_approval" });
    f.emit({ type: "approval_needed", call_id: "k1", server: "everything", tool: "get-sum", arguments: { a: 2, b: 3 }, strict: false });
    const approval = screen.getByRole("group", { name: "everything · get-sum asks to run" });
    expect(screen.getByTestId("quick-ask-arguments").textContent).toBe(JSON.stringify({ a: 2, b: 3 }, null, 2));
    // Not handed over while it answers (the answer streams here).
    expect((screen.getByRole("button", { name: "Open in Patchbay" }) as HTMLButtonElement).disabled).toBe(true);
    await expectAccessible();
    fireEvent.click(approval.querySelector("button")!);
    expect(f.ipc.respondApproval).toHaveBeenCalledWith("k1", "allow_once");
    f.emit({ type: "tool_result", call_id: "k1", result: { content: [{ type: "text", text: "5" }], structured_content: null, is_error: false }, duration_ms: 12 });
    f.emit({ type: "text_delta", text: "The sum is 5." });
    const answer = screen.getByTestId("quick-ask-answer");
    expect(answer.textContent).toContain("What is 2+3?");
    expect(answer.textContent).toContain("everything · get-sum");
    expect(answer.textContent).toContain("The sum is 5.");
    expect(screen.getByRole("button", { name: "Stop" })).toBeTruthy();
    f.emit({ type: "done", reason: "stop" });
    f.finish();
    await waitFor(() => expect(screen.getByText("Answer complete")).toBeTruthy());
    await expectAccessible();

    // A follow-up stays in the same conversation.
    fireEvent.change(field, { target: { value: "And times 2?" } });
    fireEvent.click(screen.getByRole("button", { name: "Send" }));
    await waitFor(() => expect(f.ipc.sendMessage).toHaveBeenCalledTimes(2));
    expect(f.ipc.createConversation).toHaveBeenCalledTimes(1);
    expect(f.ipc.sendMessage.mock.calls[1]![0]).toBe("c7");
  });

  it("opens the conversation in the main window (button or Ctrl+O), hides on Escape, and focuses the field when shown", async () => {
    const f = fake();
    renderIn(<QuickAsk ipc={f.ipc} />);
    const open = screen.getByRole("button", { name: "Open in Patchbay" });
    expect((open as HTMLButtonElement).disabled).toBe(true);
    const field = screen.getByRole("textbox", { name: "Quick ask" });
    fireEvent.change(field, { target: { value: "Hello" } });
    fireEvent.keyDown(field, { key: "Enter" });
    await waitFor(() => expect(f.ipc.sendMessage).toHaveBeenCalled());
    f.finish();
    await waitFor(() => expect((open as HTMLButtonElement).disabled).toBe(false));
    fireEvent.click(open);
    expect(f.ipc.openInMain).toHaveBeenCalledWith("c7");
    fireEvent.keyDown(field, { key: "o", ctrlKey: true });
    expect(f.ipc.openInMain).toHaveBeenCalledTimes(2);
    // Also when nothing has the focus (a pressed approval button is gone).
    fireEvent.keyDown(document.body, { key: "O", ctrlKey: true });
    expect(f.ipc.openInMain).toHaveBeenCalledTimes(3);
    fireEvent.keyDown(document.body, { key: "Escape" });
    expect(f.ipc.hideQuickAsk).toHaveBeenCalled();
    open.focus();
    f.show();
    expect(document.activeElement).toBe(field);
  });

  it("keeps the question and says why when the turn cannot start", async () => {
    const f = fake();
    f.ipc.sendMessage.mockImplementationOnce(() => Promise.reject({ kind: "provider", message: "no provider is configured: add one in Settings → Providers" }));
    renderIn(<QuickAsk ipc={f.ipc} />);
    const field = screen.getByRole("textbox", { name: "Quick ask" });
    fireEvent.change(field, { target: { value: "Hello?" } });
    fireEvent.keyDown(field, { key: "Enter" });
    expect((await screen.findByRole("alert")).textContent).toContain("no provider is configured");
    expect((field as HTMLTextAreaElement).value).toBe("Hello?");
  });
  it("shows a server's form asked while it answers; Escape there closes the form, not the window", async () => {
    const f = fake();
    renderIn(<QuickAsk ipc={f.ipc} />);
    await waitFor(() => expect(f.ipc.onServerRequest).toHaveBeenCalled());
    f.request({ kind: "elicitation", id: "e9", server: "everything", message: "Your name?", requested_schema: { type: "object", properties: { name: { type: "string" } } } });
    const form = screen.getByRole("dialog");
    expect(form.textContent).toContain("Your name?");
    fireEvent.keyDown(form, { key: "Escape" });
    await waitFor(() => expect(f.ipc.respondServerRequest).toHaveBeenCalledWith("e9", { action: "cancel" }));
    expect(screen.queryByRole("dialog")).toBeNull();
    expect(f.ipc.hideQuickAsk).not.toHaveBeenCalled();
    // With no dialog, Escape hides the window as before.
    fireEvent.keyDown(window, { key: "Escape" });
    expect(f.ipc.hideQuickAsk).toHaveBeenCalledTimes(1);
  });
});
