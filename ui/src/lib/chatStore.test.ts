import { describe, expect, it } from "vitest";
import { ConversationStore } from "./chatStore";
import type { TurnEvent } from "./ipc";
import { message } from "../test/render";

function run(store: ConversationStore, events: TurnEvent[]) {
  for (const e of events) store.apply(e);
}

describe("ConversationStore", () => {
  it("streams text and reasoning into a new assistant message", () => {
    const s = new ConversationStore([message("u0", "user", "earlier")]);
    let notified = 0;
    s.subscribe(() => notified++);
    run(s, [
      { type: "turn_started", user_message: message("u1", "user", "hi"), assistant_message_id: "a1", model: "m" },
      { type: "reasoning_delta", text: "let me " },
      { type: "reasoning_delta", text: "think" },
      { type: "text_delta", text: "Hel" },
      { type: "text_delta", text: "lo" },
    ]);
    const st = s.getState();
    expect(st.messages.map((m) => m.id)).toEqual(["u0", "u1", "a1"]);
    expect(st.messages[2]?.text).toBe("Hello");
    expect(st.messages[2]?.reasoning).toBe("let me think");
    expect(st.messages[2]?.parent_id).toBe("u1");
    expect(st.streamingId).toBe("a1");
    expect(notified).toBe(5);
    s.apply({ type: "done", reason: "stop" });
    expect(s.getState().streamingId).toBeNull();
  });

  it("shows a call as the model writes it, then its card in the same place", () => {
    const s = new ConversationStore();
    run(s, [
      { type: "turn_started", user_message: null, assistant_message_id: "a1", model: "m" },
      { type: "tool_call_started", call_id: "c0", server: "fs", tool: "list", arguments: {}, status: "running" },
      { type: "tool_call_writing", call_id: "c1", server: "fs", tool: "write" },
      { type: "tool_arguments_delta", call_id: "c1", delta: '{"path": "a.txt", ' },
      { type: "tool_arguments_delta", call_id: "c1", delta: '"text": "hel' },
    ]);
    const calls = () => s.getState().messages[0]?.tool_calls ?? [];
    expect(calls().map((c) => [c.call_id, c.status, c.arguments_text])).toEqual([
      ["c0", "running", undefined],
      ["c1", "writing", '{"path": "a.txt", "text": "hel'],
    ]);
    // The card comes in the state the call is in: here, waiting for approval.
    s.apply({ type: "tool_call_started", call_id: "c1", server: "fs", tool: "write", arguments: { path: "a.txt", text: "hello" }, status: "pending_approval" });
    expect(calls().map((c) => [c.call_id, c.status])).toEqual([
      ["c0", "running"],
      ["c1", "pending_approval"],
    ]);
    expect(calls()[1]?.arguments).toEqual({ path: "a.txt", text: "hello" });
    expect(calls()[1]?.arguments_text).toBeUndefined();
  });

  it("follows a tool call through approval, progress, logs and result", () => {
    const s = new ConversationStore();
    run(s, [
      { type: "turn_started", user_message: null, assistant_message_id: "a1", model: "m" },
      { type: "tool_call_started", call_id: "c1", server: "fs", tool: "read", arguments: { path: "x" }, status: "running" },
      { type: "tool_call_started", call_id: "c2", server: "fs", tool: "list", arguments: {}, status: "running" },
      { type: "approval_needed", call_id: "c1", server: "fs", tool: "read", arguments: { path: "x" }, strict: false },
    ]);
    const calls = () => s.getState().messages[0]?.tool_calls ?? [];
    expect(calls().map((c) => [c.call_id, c.status, c.strict])).toEqual([
      ["c1", "pending_approval", false],
      ["c2", "running", undefined],
    ]);
    // A strict server's call: its card offers no answer that is remembered.
    run(s, [{ type: "approval_needed", call_id: "c2", server: "fs", tool: "list", arguments: {}, strict: true }]);
    expect(calls()[1]?.strict).toBe(true);
    run(s, [
      { type: "tool_running", call_id: "c1" },
      { type: "tool_progress", call_id: "c1", progress: { progress: 5, total: 10, message: "half" } },
      { type: "tool_log", call_id: "c1", log: { level: "info", message: "reading" } },
      { type: "tool_result", call_id: "c1", result: { content: [{ type: "text", text: "ok" }], structured_content: null, is_error: false }, duration_ms: 42 },
      { type: "tool_failed", call_id: "c2", error: "server exited", stderr_tail: "boom", duration_ms: 7 },
    ]);
    const [c1, c2] = calls();
    expect(c1?.status).toBe("done");
    expect(c1?.duration_ms).toBe(42);
    expect(c1?.progress?.progress).toBe(5);
    expect(c1?.logs).toEqual([{ level: "info", message: "reading" }]);
    expect(c2?.status).toBe("error");
    expect(c2?.stderr_tail).toBe("boom");
  });

  it("keeps what the last request left out to fit the context window, until the next turn", () => {
    const s = new ConversationStore();
    run(s, [
      { type: "turn_started", user_message: null, assistant_message_id: "a1", model: "m" },
      { type: "context_trimmed", elided_tool_results: 3, dropped_messages: 2, context_window: 8192 },
      { type: "tool_search", searchable: 290, sent: 10 },
    ]);
    expect(s.getState().trimmed).toEqual({ elided_tool_results: 3, dropped_messages: 2, context_window: 8192 });
    expect(s.getState().toolSearch).toEqual({ searchable: 290, sent: 10 });
    s.apply({ type: "done", reason: "stop" });
    expect(s.getState().trimmed).not.toBeNull();
    s.apply({ type: "turn_started", user_message: null, assistant_message_id: "a2", model: "m" });
    expect(s.getState().trimmed).toBeNull();
    expect(s.getState().toolSearch).toBeNull();
  });

  it("marks calls still open at the end of a cancelled turn as cancelled", () => {
    const s = new ConversationStore();
    run(s, [
      { type: "turn_started", user_message: null, assistant_message_id: "a1", model: "m" },
      { type: "tool_call_started", call_id: "c1", server: "fs", tool: "read", arguments: {}, status: "running" },
      { type: "done", reason: "cancelled" },
    ]);
    expect(s.getState().messages[0]?.tool_calls[0]?.status).toBe("cancelled");
  });

  it("keeps an isError result as an error and records turn errors", () => {
    const s = new ConversationStore();
    run(s, [
      { type: "turn_started", user_message: null, assistant_message_id: "a1", model: "m" },
      { type: "tool_call_started", call_id: "c1", server: "fs", tool: "read", arguments: {}, status: "running" },
      { type: "tool_result", call_id: "c1", result: { content: [], structured_content: null, is_error: true }, duration_ms: 1 },
      { type: "error", error: { kind: "provider", message: "401 Unauthorized" } },
    ]);
    const m = s.getState().messages[0];
    expect(m?.tool_calls[0]?.status).toBe("error");
    expect(m?.error?.message).toBe("401 Unauthorized");
    expect(s.getState().error?.kind).toBe("provider");
  });

  it("truncates after a message for regenerate and edit", () => {
    const s = new ConversationStore([message("u1", "user", "a"), message("a1", "assistant", "b"), message("u2", "user", "c")]);
    s.truncateAfter("a1");
    expect(s.getState().messages.map((m) => m.id)).toEqual(["u1", "a1"]);
    s.truncateAfter(null);
    expect(s.getState().messages).toEqual([]);
  });

  it("keeps the objects of messages a reload did not change", () => {
    const s = new ConversationStore();
    s.load([message("u1", "user", "hi"), message("a1", "assistant", "old")]);
    const [u1] = s.getState().messages;
    s.load([message("u1", "user", "hi"), message("a1", "assistant", "new"), message("u2", "user", "next")], 3);
    const st = s.getState();
    expect(st.messages[0]).toBe(u1);
    expect(st.messages.map((m) => m.text)).toEqual(["hi", "new", "next"]);
    expect(st.earlier).toBe(3);
  });
});
