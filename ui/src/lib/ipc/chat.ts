// Conversations and turns: the list, a conversation's branch and settings,
// sending, regenerating and editing (a turn's events come on a channel), approvals
// and the raw trace of a tool call.
import type { ReasoningEffort } from "./assistants";
import { call, channel, type IpcError, on } from "./client";
import type { ContentPart, ToolLog, ToolProgress, ToolResult } from "./mcp";

/**
 * Mirrors `patchbay_core::app::AttachmentInput`: a part, with the name of the file it came
 * from; or a document's bytes (base64) for the core to read to text (PDF, Word, HTML, text).
 */
export type AttachmentInput = (ContentPart & { title?: string }) | { type: "file"; title: string; data: string };

/** Mirrors `patchbay_core::llm::Usage`. */
export interface Usage {
  input_tokens: number;
  output_tokens: number;
}

export interface ConversationSummary {
  id: string;
  title: string;
  /** Milliseconds since the epoch. */
  created_at: number;
  updated_at: number;
  /** A matching passage when the list was searched. */
  snippet: string | null;
  /** Kept at the top of the list. */
  pinned: boolean;
}

/** `writing` is the window's own: the model is still writing the call (its `arguments_text` so far). */
export type ToolStatus = "writing" | "pending_approval" | "running" | "done" | "error" | "cancelled" | "denied";

/** One tool call of an assistant message, as stored and as streamed. */
export interface ToolTrace {
  call_id: string;
  server: string;
  tool: string;
  arguments: unknown;
  status: ToolStatus;
  duration_ms: number | null;
  progress: ToolProgress | null;
  result: ToolResult | null;
  error: string | null;
  stderr_tail: string | null;
  logs: ToolLog[];
  /** While `writing`: the arguments' JSON text so far. */
  arguments_text?: string;
  /** While `pending_approval`: its server runs at strict, so no answer is remembered (`approval_needed`). */
  strict?: boolean;
}

/** A knowledge-base passage the answer cites as `[n]`. */
export interface Citation {
  index: number;
  document: string;
  path: string;
  score: number;
  text: string;
  /** Where the question's words are in `text`: [start, end) in UTF-16 code units. */
  marks: [number, number][];
  /** The headings the passage sits under, outermost first, joined with " > ". */
  heading: string | null;
  /** Its first and last line in the document. */
  lines: [number, number] | null;
}

export interface Message {
  id: string;
  parent_id: string | null;
  role: "user" | "assistant";
  created_at: number;
  text: string;
  reasoning: string | null;
  /** Attachments of a user message (resource links, images). */
  parts: ContentPart[];
  tool_calls: ToolTrace[];
  citations: Citation[];
  model: string | null;
  /** Ids of this message and its siblings (branches), in creation order. */
  siblings: string[];
  error: IpcError | null;
}

/** Per-conversation choices: model, servers and tools. */
export interface ConversationSettings {
  provider: string | null;
  model: string | null;
  /** Servers the model may use; `null` means every enabled server. */
  servers: string[] | null;
  /** `server/tool` names hidden in this conversation. */
  disabled_tools: string[];
  assistant_id: string | null;
  /** This conversation's own instructions, in place of its assistant's system prompt. */
  system_prompt: string | null;
  /** This conversation's reasoning effort, in place of its assistant's. */
  reasoning: ReasoningEffort | null;
}

export interface ConversationDetail {
  conversation: ConversationSummary;
  /** The active branch (its last `tail` messages when asked), root first. */
  messages: Message[];
  /** How many branch messages come before `messages`. */
  earlier: number;
  settings: ConversationSettings;
}

/** A stretch of the active branch, and how many branch messages come before it. */
export interface MessagePage {
  messages: Message[];
  earlier: number;
}

/** One event of a turn, streamed through the `on_event` channel of send/regenerate/edit. */
export type AgentEvent =
  | { type: "turn_started"; user_message: Message | null; assistant_message_id: string; model: string }
  | { type: "text_delta"; text: string }
  | { type: "reasoning_delta"; text: string }
  | { type: "tool_call_writing"; call_id: string; server: string; tool: string }
  | { type: "tool_arguments_delta"; call_id: string; delta: string }
  | { type: "tool_call_started"; call_id: string; server: string; tool: string; arguments: unknown; status: "pending_approval" | "running" }
  /** `strict`: the server runs at strict, where every call is asked: only "allow once" and "deny" are offered. */
  | { type: "approval_needed"; call_id: string; strict: boolean }
  | { type: "tool_running"; call_id: string }
  | { type: "tool_progress"; call_id: string; progress: ToolProgress }
  | { type: "tool_log"; call_id: string; log: ToolLog }
  | { type: "tool_result"; call_id: string; result: ToolResult; duration_ms: number }
  | { type: "tool_failed"; call_id: string; error: string; stderr_tail: string | null; duration_ms: number }
  | { type: "tool_cancelled"; call_id: string }
  | { type: "tool_denied"; call_id: string }
  | { type: "citations"; citations: Citation[] }
  | { type: "usage"; usage: Usage }
  | { type: "error"; error: IpcError }
  | { type: "done"; reason: "stop" | "cancelled" | "error" | "length" };

export type ApprovalDecision = "allow_once" | "allow_conversation" | "allow_always" | "deny";

/** Raw JSON-RPC of one stored tool call. */
export interface TraceRecord {
  call_id: string;
  server: string;
  tool: string;
  request: unknown;
  response: unknown;
}

/** The model named a conversation. */
export interface ConversationRenamed {
  id: string;
  title: string;
}

export interface TurnOutcome {
  assistant_message_id: string;
}

export const chatIpc = {
  listConversations: (query: string | null) => call<ConversationSummary[]>("list_conversations", { query }),
  createConversation: (assistantId: string | null) =>
    call<ConversationSummary>("create_conversation", { assistant_id: assistantId }),
  renameConversation: (id: string, title: string) => call<void>("rename_conversation", { id, title }),
  pinConversation: (id: string, pinned: boolean) => call<void>("pin_conversation", { id, pinned }),
  deleteConversation: (id: string) => call<void>("delete_conversation", { id }),
  getConversation: (id: string, tail: number | null = null) => call<ConversationDetail>("get_conversation", { id, tail }),
  earlierMessages: (conversationId: string, before: string, limit: number) =>
    call<MessagePage>("earlier_messages", { conversation_id: conversationId, before, limit }),
  updateConversationSettings: (id: string, settings: ConversationSettings) =>
    call<void>("update_conversation_settings", { id, settings }),
  exportConversation: (id: string, format: "markdown" | "json") =>
    call<string | null>("export_conversation", { id, format }),
  sendMessage: (conversationId: string, text: string, attachments: AttachmentInput[], onEvent: (e: AgentEvent) => void) =>
    call<TurnOutcome>("send_message", {
      conversation_id: conversationId,
      text,
      attachments,
      on_event: channel(onEvent),
    }),
  regenerate: (conversationId: string, messageId: string, onEvent: (e: AgentEvent) => void) =>
    call<TurnOutcome>("regenerate", { conversation_id: conversationId, message_id: messageId, on_event: channel(onEvent) }),
  editMessage: (conversationId: string, messageId: string, text: string, onEvent: (e: AgentEvent) => void) =>
    call<TurnOutcome>("edit_message", {
      conversation_id: conversationId,
      message_id: messageId,
      text,
      on_event: channel(onEvent),
    }),
  cancelTurn: (conversationId: string) => call<void>("cancel_turn", { conversation_id: conversationId }),
  switchBranch: (conversationId: string, messageId: string) =>
    call<Message[]>("switch_branch", { conversation_id: conversationId, message_id: messageId }),
  /** A new conversation carrying on from a message (the branch up to it, the settings). */
  forkConversation: (conversationId: string, messageId: string) =>
    call<ConversationSummary>("fork_conversation", { conversation_id: conversationId, message_id: messageId }),
  /** Deletes a message with the replies after it; the branch shown now. */
  deleteMessage: (conversationId: string, messageId: string) =>
    call<Message[]>("delete_message", { conversation_id: conversationId, message_id: messageId }),
  respondApproval: (callId: string, decision: ApprovalDecision) =>
    call<void>("respond_approval", { call_id: callId, decision }),
  getTrace: (callId: string) => call<TraceRecord>("get_trace", { call_id: callId }),
  onConversationRenamed: (h: (r: ConversationRenamed) => void) => on<ConversationRenamed>("conversation_renamed", h),
};
