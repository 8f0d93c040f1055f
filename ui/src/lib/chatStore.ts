// One streaming store per conversation: holds the active branch's messages and
// folds the TurnEvents of a running turn into them. Components subscribe with
// `useConversation`; nothing here knows about Tauri.
import { useSyncExternalStore } from "react";
import type { TurnEvent, AttachmentInput, DoneReason, IpcError, JsonValue, Message, ToolTrace, Usage } from "./ipc";

export interface ConversationState {
  messages: Message[];
  /** How many messages of the branch come before `messages` (not loaded yet). */
  earlier: number;
  /** Id of the assistant message being streamed, if a turn is running. */
  streamingId: string | null;
  usage: Usage | null;
  /** The last request left older history out to fit the model's context window. */
  trimmed: Omit<Extract<TurnEvent, { type: "context_trimmed" }>, "type"> | null;
  /** This turn finds its tools through search (they would not all fit the model's context). */
  toolSearch: Omit<Extract<TurnEvent, { type: "tool_search" }>, "type"> | null;
  error: IpcError | null;
  /** How the last turn ended (stopped by the user, or not), once it has. */
  ended: DoneReason | null;
}

type Listener = () => void;

/** A call's card: running until told otherwise. */
function newCall(call_id: string, server: string, tool: string, args: JsonValue): ToolTrace {
  return { call_id, server, tool, arguments: args, status: "running", duration_ms: null, progress: null, result: null, error: null, stderr_tail: null, logs: [] };
}

function emptyAssistant(id: string, parentId: string | null, model: string): Message {
  return {
    id,
    parent_id: parentId,
    role: "assistant",
    created_at: Date.now(),
    text: "",
    reasoning: null,
    parts: [],
    tool_calls: [],
    citations: [],
    unavailable: [],
    model,
    siblings: [id],
    error: null,
  };
}

/** What the user has typed and attached but not sent. */
export interface Draft {
  text: string;
  attachments: AttachmentInput[];
}

export class ConversationStore {
  private state: ConversationState;
  private listeners = new Set<Listener>();
  private unsent: Draft = { text: "", attachments: [] };

  constructor(messages: Message[] = []) {
    this.state = { messages, earlier: 0, streamingId: null, usage: null, trimmed: null, toolSearch: null, error: null, ended: null };
  }

  getState = (): ConversationState => this.state;

  /** A message was sent here (its turn may not have started yet). */
  sent = false;

  markSent() {
    this.sent = true;
  }

  /** The composer's unsent message: kept while the user opens another conversation or Settings. */
  get draft(): Draft {
    return this.unsent;
  }

  setDraft(d: Draft) {
    this.unsent = d;
  }

  subscribe = (l: Listener): (() => void) => {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  };

  private set(next: Partial<ConversationState>) {
    this.state = { ...this.state, ...next };
    for (const l of this.listeners) l();
  }

  /**
   * Replaces the messages (after loading or switching a branch); `earlier` are not loaded.
   * A message that did not change keeps its object, so its row is not rendered again
   * and the page does not hold two copies of it.
   */
  load(messages: Message[], earlier = 0) {
    const known = new Map(this.state.messages.map((m) => [m.id, m]));
    const kept = messages.map((m) => {
      const old = known.get(m.id);
      return old && JSON.stringify(old) === JSON.stringify(m) ? old : m;
    });
    this.set({ messages: kept, earlier, streamingId: null, error: null });
  }

  /** Puts older messages of the branch in front of the loaded ones. */
  prepend(messages: Message[], earlier: number) {
    this.set({ messages: [...messages, ...this.state.messages], earlier });
  }

  /** Drops messages after `id` (for regenerate/edit, which start a new branch there). */
  truncateAfter(id: string | null) {
    if (id === null) return this.set({ messages: [], earlier: 0 });
    const at = this.state.messages.findIndex((m) => m.id === id);
    if (at >= 0) this.set({ messages: this.state.messages.slice(0, at + 1) });
  }

  fail(error: IpcError) {
    this.set({ streamingId: null, error });
  }

  private updateStreaming(f: (m: Message) => Message) {
    const id = this.state.streamingId;
    if (!id) return;
    const messages = this.state.messages.slice();
    const i = messages.findIndex((m) => m.id === id);
    const current = messages[i];
    if (!current) return;
    messages[i] = f(current);
    this.set({ messages });
  }

  private updateCall(callId: string, f: (t: ToolTrace) => ToolTrace) {
    this.updateStreaming((m) => ({
      ...m,
      tool_calls: m.tool_calls.map((t) => (t.call_id === callId ? f(t) : t)),
    }));
  }

  /** Folds one event of the running turn into the state. */
  apply(event: TurnEvent) {
    switch (event.type) {
      case "turn_started": {
        const messages = this.state.messages.slice();
        if (event.user_message) messages.push(event.user_message);
        const parent = messages[messages.length - 1]?.id ?? null;
        messages.push(emptyAssistant(event.assistant_message_id, parent, event.model));
        this.set({ messages, streamingId: event.assistant_message_id, trimmed: null, toolSearch: null, error: null, ended: null });
        return;
      }
      case "text_delta":
        return this.updateStreaming((m) => ({ ...m, text: m.text + event.text }));
      case "reasoning_delta":
        return this.updateStreaming((m) => ({ ...m, reasoning: (m.reasoning ?? "") + event.text }));
      case "tool_call_writing":
        return this.updateStreaming((m) => ({
          ...m,
          tool_calls: [...m.tool_calls, { ...newCall(event.call_id, event.server, event.tool, null), status: "writing", arguments_text: "" }],
        }));
      case "tool_arguments_delta":
        return this.updateCall(event.call_id, (t) => ({ ...t, arguments_text: (t.arguments_text ?? "") + event.delta }));
      case "tool_call_started":
        return this.updateStreaming((m) => {
          const call = { ...newCall(event.call_id, event.server, event.tool, event.arguments), status: event.status };
          // The call shown being written becomes its card, in its place.
          const written = m.tool_calls.some((t) => t.call_id === event.call_id);
          const tool_calls = written ? m.tool_calls.map((t) => (t.call_id === event.call_id ? call : t)) : [...m.tool_calls, call];
          return { ...m, tool_calls };
        });
      case "approval_needed":
        return this.updateCall(event.call_id, (t) => ({ ...t, status: "pending_approval", strict: event.strict }));
      case "tool_running":
        return this.updateCall(event.call_id, (t) => ({ ...t, status: "running" }));
      case "tool_progress":
        return this.updateCall(event.call_id, (t) => ({ ...t, progress: event.progress }));
      case "tool_log":
        return this.updateCall(event.call_id, (t) => ({ ...t, logs: [...t.logs, event.log] }));
      case "tool_result":
        return this.updateCall(event.call_id, (t) => ({
          ...t,
          status: event.result.is_error ? "error" : "done",
          result: event.result,
          duration_ms: event.duration_ms,
        }));
      case "tool_failed":
        return this.updateCall(event.call_id, (t) => ({
          ...t,
          status: "error",
          error: event.error,
          stderr_tail: event.stderr_tail,
          duration_ms: event.duration_ms,
        }));
      case "tool_cancelled":
        return this.updateCall(event.call_id, (t) => ({ ...t, status: "cancelled" }));
      case "tool_denied":
        return this.updateCall(event.call_id, (t) => ({ ...t, status: "denied" }));
      case "citations":
        return this.updateStreaming((m) => ({ ...m, citations: event.citations, unavailable: event.unavailable }));
      case "usage":
        return this.set({ usage: event.usage });
      case "tool_search":
        return this.set({ toolSearch: { searchable: event.searchable, sent: event.sent } });
      case "context_trimmed":
        return this.set({
          trimmed: { elided_tool_results: event.elided_tool_results, dropped_messages: event.dropped_messages, context_window: event.context_window },
        });
      case "error":
        this.updateStreaming((m) => ({ ...m, error: event.error }));
        return this.set({ error: event.error });
      case "done":
        // Calls still open when the turn ends were cut off by it.
        this.updateStreaming((m) => ({
          ...m,
          tool_calls: m.tool_calls.map((t) =>
            t.status === "running" || t.status === "pending_approval" ? { ...t, status: "cancelled" } : t,
          ),
        }));
        return this.set({ streamingId: null, ended: event.reason });
    }
  }
}

/** Keeps one store per conversation id, so a turn keeps streaming while the user looks elsewhere. */
export class ChatStores {
  private stores = new Map<string, ConversationStore>();
  private active: string | null = null;
  /** Conversations made by "New chat" in this window: discarded when left before anything was sent. */
  private fresh = new Set<string>();

  /** The conversation last open, so the chat page reopens it after a visit to Settings. */
  activeId(): string | null {
    return this.active;
  }

  setActive(id: string | null) {
    this.active = id;
  }

  get(id: string): ConversationStore {
    let s = this.stores.get(id);
    if (!s) {
      s = new ConversationStore();
      this.stores.set(id, s);
    }
    return s;
  }

  drop(id: string) {
    this.stores.delete(id);
    this.fresh.delete(id);
    if (this.active === id) this.active = null;
  }

  markFresh(id: string) {
    this.fresh.add(id);
  }

  /** A new chat with nothing in it: no message, none streaming, nothing typed or attached. */
  unused(id: string | null): id is string {
    if (id === null || !this.fresh.has(id)) return false;
    const s = this.get(id);
    const { messages, streamingId } = s.getState();
    return !s.sent && messages.length === 0 && streamingId === null && s.draft.text.trim() === "" && s.draft.attachments.length === 0;
  }
}

export function useConversation(store: ConversationStore): ConversationState {
  return useSyncExternalStore(store.subscribe, store.getState, store.getState);
}
