// Conversations and turns: the list, a conversation's branch and settings,
// sending, regenerating and editing (a turn's events come on a channel), approvals
// and the raw trace of a tool call.
import { call, channel, on } from "./client";
import type {
  ApprovalAnswer,
  AttachmentInput,
  ConversationDetail,
  ConversationRenamed,
  ConversationSettings,
  ConversationSummary,
  KeptPage,
  MessagePage,
  MessageView,
  ToolTrace as StoredToolTrace,
  TraceRecord,
  TraceStatus,
  TurnEvent,
  TurnOutcome,
} from "./generated";

export type {
  ApprovalAnswer as ApprovalDecision,
  AttachmentInput,
  Citation,
  Unavailable,
  ConversationDetail,
  ConversationRenamed,
  ConversationSettings,
  ConversationSummary,
  DoneReason,
  KeptPage,
  KeptResult,
  MessagePage,
  MessageView,
  TraceRecord,
  TraceStatus,
  TurnEvent,
  TurnOutcome,
  Usage,
} from "./generated";

/**
 * One tool call of an assistant message as the window shows it: as stored and as streamed
 * (`TraceStatus`), or `writing`, the window's own, while the model still writes the call.
 */
export type ToolStatus = "writing" | TraceStatus;

/** A tool call's card: the stored `ToolTrace`, with what the window adds while it streams. */
export type ToolTrace = Omit<StoredToolTrace, "status"> & {
  status: ToolStatus;
  /** While `writing`: the arguments' JSON text so far. */
  arguments_text?: string;
  /** While `pending_approval`: its server runs at strict, so no answer is remembered (`approval_needed`). */
  strict?: boolean;
};

/** A message as the window keeps it: its tool calls are cards that can also be `writing`. */
export type Message = Omit<MessageView, "tool_calls"> & { tool_calls: ToolTrace[] };

export const chatIpc = {
  listConversations: (query: string | null) => call<ConversationSummary[]>("list_conversations", { query }),
  createConversation: (assistantId: string | null) =>
    call<ConversationSummary>("create_conversation", { assistant_id: assistantId }),
  renameConversation: (id: string, title: string) => call<void>("rename_conversation", { id, title }),
  pinConversation: (id: string, pinned: boolean) => call<void>("pin_conversation", { id, pinned }),
  deleteConversation: (id: string) => call<void>("delete_conversation", { id }),
  discardConversationIfUnused: (id: string) => call<boolean>("discard_conversation_if_unused", { id }),
  getConversation: (id: string, tail: number | null = null) => call<ConversationDetail>("get_conversation", { id, tail }),
  earlierMessages: (conversationId: string, before: string, limit: number) =>
    call<MessagePage>("earlier_messages", { conversation_id: conversationId, before, limit }),
  updateConversationSettings: (id: string, settings: ConversationSettings) =>
    call<void>("update_conversation_settings", { id, settings }),
  exportConversation: (id: string, format: "markdown" | "json") =>
    call<string | null>("export_conversation", { id, format }),
  sendMessage: (conversationId: string, text: string, attachments: AttachmentInput[], onEvent: (e: TurnEvent) => void) =>
    call<TurnOutcome>("send_message", {
      conversation_id: conversationId,
      text,
      attachments,
      on_event: channel(onEvent),
    }),
  regenerate: (conversationId: string, messageId: string, onEvent: (e: TurnEvent) => void) =>
    call<TurnOutcome>("regenerate", { conversation_id: conversationId, message_id: messageId, on_event: channel(onEvent) }),
  editMessage: (conversationId: string, messageId: string, text: string, onEvent: (e: TurnEvent) => void) =>
    call<TurnOutcome>("edit_message", {
      conversation_id: conversationId,
      message_id: messageId,
      text,
      on_event: channel(onEvent),
    }),
  cancelTurn: (conversationId: string) => call<void>("cancel_turn", { conversation_id: conversationId }),
  switchBranch: (conversationId: string, messageId: string) =>
    call<MessageView[]>("switch_branch", { conversation_id: conversationId, message_id: messageId }),
  /** A new conversation carrying on from a message (the branch up to it, the settings). */
  forkConversation: (conversationId: string, messageId: string) =>
    call<ConversationSummary>("fork_conversation", { conversation_id: conversationId, message_id: messageId }),
  /** Deletes a message with the replies after it; the branch shown now. */
  deleteMessage: (conversationId: string, messageId: string) =>
    call<MessageView[]>("delete_message", { conversation_id: conversationId, message_id: messageId }),
  respondApproval: (callId: string, decision: ApprovalAnswer) =>
    call<void>("respond_approval", { call_id: callId, decision }),
  getTrace: (callId: string) => call<TraceRecord>("get_trace", { call_id: callId }),
  /** Characters `offset`.. of a tool result kept whole with the conversation (at most 262,144). */
  readKeptResult: (conversationId: string, result: number, offset: number, length: number) =>
    call<KeptPage>("read_kept_result", { conversation_id: conversationId, result, offset, length }),
  onConversationRenamed: (h: (r: ConversationRenamed) => void) => on<ConversationRenamed>("conversation_renamed", h),
};
