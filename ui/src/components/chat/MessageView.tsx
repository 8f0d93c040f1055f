// One message: who wrote it and when, markdown text, collapsible reasoning,
// tool traces, citation chips, and the actions (copy, edit & resend,
// regenerate, a new chat from here, delete with the replies after it once
// confirmed, branch switcher). The actions are drawn only for the newest message
// and the one under the pointer or holding the focus (a message is a focusable
// article, so the keyboard reaches them): drawn on every message they took a
// long conversation's memory up by a tenth (docs/BENCHMARKS.md).
import { memo, useEffect, useRef, useState } from "react";
import { Bot, GitBranch, Pencil, RefreshCw, Trash2, User } from "lucide-react";
import { useI18n } from "../../lib/i18n";
import { messageTime } from "../../lib/time";
import type { ApprovalDecision, Citation, ContentPart, Message, ToolTrace, Unavailable } from "../../lib/ipc";
import { Markdown } from "./LazyMarkdown";
import { PartView } from "./ToolResultView";
import { ToolTraceGroup } from "./ToolTraceCard";
import { CopyButton } from "../common/CopyButton";
import { IconButton } from "../common/IconButton";
import { Marked } from "../common/Marked";

export interface MessageActions {
  onDecide: (callId: string, d: ApprovalDecision) => void;
  onInspect: (trace: ToolTrace) => void;
  onRegenerate: (message: Message) => void;
  onEdit: (message: Message, text: string) => void;
  onSwitchBranch: (messageId: string) => void;
  onDelete: (message: Message) => void;
  /** Carries on from this message in a new conversation. */
  onFork: (message: Message) => void;
}

export function CitationChips({
  citations,
  unavailable,
  open,
  setOpen,
}: {
  citations: Citation[];
  /** Knowledge sources that gave the answer nothing, named rather than left out. */
  unavailable: Unavailable[];
  open: number | null;
  setOpen: (n: number | null) => void;
}) {
  const { t } = useI18n();
  if (citations.length === 0 && unavailable.length === 0) return null;
  const shown = citations.find((c) => c.index === open);
  return (
    <div className="citations" aria-label={t("chat.citations")}>
      {citations.map((c) => {
        const document = c.origin ? `${c.origin} · ${c.document}` : c.document;
        return (
          <button
            key={c.index}
            type="button"
            className={open === c.index ? "chip active" : "chip"}
            aria-expanded={open === c.index}
            data-testid="citation-chip"
            title={c.heading ? `${document} › ${c.heading}` : document}
            onClick={() => setOpen(open === c.index ? null : c.index)}
          >
            [{c.index}] {document}
            {c.heading && <span className="chip-heading"> › {c.heading.split(" > ").pop()}</span>}
          </button>
        );
      })}
      {unavailable.map((u) => (
        <span key={u.name} className="chip chip-unavailable" data-testid="citation-unavailable" title={u.why}>
          {t("chat.sourceUnavailable", { name: u.name, why: u.why })}
        </span>
      ))}
      {shown && (
        <blockquote className="citation-passage" data-testid="citation-passage">
          <p>
            <Marked text={shown.text} marks={shown.marks} />
          </p>
          <footer className="muted">
            {shown.origin && <>{shown.origin} · </>}
            {shown.heading && <>{shown.heading} · </>}
            {shown.path}
            {shown.lines && <> · {t("chat.citationLines", { first: shown.lines[0], last: shown.lines[1] })}</>}
            {/* An older Patchbay's citation kept no relevance. */}
            {shown.relevance !== null && <> · {t("chat.citationRelevance", { score: shown.relevance.toFixed(2) })}</>}
          </footer>
        </blockquote>
      )}
    </div>
  );
}

/**
 * What the user attached: a text file (its view is "name, blank line, text")
 * folds away under its name, as it came; images, audio and resources show as they are.
 */
function AttachedPart({ part }: { part: ContentPart }) {
  if (part.type !== "text") return <PartView part={part} attached />;
  const cut = part.text.indexOf("\n\n");
  return (
    <details className="attached-text" data-testid="attached-text">
      <summary>{cut < 0 ? part.text : part.text.slice(0, cut)}</summary>
      {cut >= 0 && <pre>{part.text.slice(cut + 2)}</pre>}
    </details>
  );
}

function Reasoning({ text, streaming }: { text: string; streaming: boolean }) {
  const { t } = useI18n();
  return (
    <details className="reasoning" open={streaming} data-testid="reasoning">
      <summary>{streaming ? t("chat.thinking") : t("chat.reasoning")}</summary>
      <Markdown text={text} streaming={streaming} />
    </details>
  );
}

function BranchSwitcher({ message, onSwitch }: { message: Message; onSwitch: (id: string) => void }) {
  const { t } = useI18n();
  const at = message.siblings.indexOf(message.id);
  const n = message.siblings.length;
  if (n < 2) return null;
  const prev = message.siblings[at - 1];
  const next = message.siblings[at + 1];
  return (
    <span className="branch-switcher" data-testid="branch-switcher">
      <button type="button" className="icon" aria-label={t("chat.prevBranch")} disabled={!prev} onClick={() => prev && onSwitch(prev)}>
        ‹
      </button>
      <span>
        {at + 1}/{n}
      </span>
      <button type="button" className="icon" aria-label={t("chat.nextBranch")} disabled={!next} onClick={() => next && onSwitch(next)}>
        ›
      </button>
    </span>
  );
}

export const MessageView = memo(function MessageView({
  message,
  streaming,
  latest,
  actions,
}: {
  message: Message;
  streaming: boolean;
  /** The conversation's newest message, whose actions are always drawn. */
  latest: boolean;
  actions: MessageActions;
}) {
  const { t, lang } = useI18n();
  const [editing, setEditing] = useState<string | null>(null);
  const [citation, setCitation] = useState<number | null>(null);
  const [confirming, setConfirming] = useState(false);
  const [pointed, setPointed] = useState(false);
  const [focused, setFocused] = useState(false);
  // Delete's confirmation answered Cancel: the focus goes back to Delete, not to the page.
  const deleteButton = useRef<HTMLButtonElement>(null);
  const refocusDelete = useRef(false);
  useEffect(() => {
    if (confirming || !refocusDelete.current) return;
    refocusDelete.current = false;
    deleteButton.current?.focus();
  }, [confirming]);
  // "Today" is the day the message was first shown.
  const [shownAt] = useState(() => Date.now());
  const written = messageTime(message.created_at, shownAt, lang);
  const hasCitations = message.citations.length > 0;
  const isUser = message.role === "user";
  const sender = isUser ? t("chat.you") : (message.model ?? t("chat.assistant"));
  const showActions = latest || pointed || focused || confirming;
  return (
    <div
      className={`message ${message.role}`}
      data-testid={`message-${message.role}`}
      data-message-id={message.id}
      role="article"
      tabIndex={0}
      aria-label={t("chat.messageLabel", { sender, time: written.full })}
      onPointerEnter={() => setPointed(true)}
      onPointerLeave={() => setPointed(false)}
      onFocus={() => setFocused(true)}
      onBlur={(e) => {
        // The window losing the focus keeps the document's (the actions stay, to come back to).
        if (!e.currentTarget.contains(e.relatedTarget) && !e.currentTarget.contains(document.activeElement)) setFocused(false);
      }}
    >
      <div className="message-meta muted">
        <span className="avatar" aria-hidden="true">
          {isUser ? <User size={14} /> : <Bot size={14} />}
        </span>
        <span className={isUser ? "sender" : "sender model-badge"}>{sender}</span>
        <time dateTime={new Date(message.created_at).toISOString()} title={written.full} data-testid="message-time">
          {written.short}
        </time>
        <BranchSwitcher message={message} onSwitch={actions.onSwitchBranch} />
      </div>
      {message.reasoning && <Reasoning text={message.reasoning} streaming={streaming && message.text === ""} />}
      {editing !== null ? (
        <form
          className="edit-form"
          onSubmit={(e) => {
            e.preventDefault();
            actions.onEdit(message, editing);
            setEditing(null);
          }}
        >
          <textarea aria-label={t("chat.editMessage")} value={editing} rows={4} onChange={(e) => setEditing(e.target.value)} />
          <div className="row">
            <button type="submit" className="primary">
              {t("chat.resend")}
            </button>
            <button type="button" onClick={() => setEditing(null)}>
              {t("common.cancel")}
            </button>
          </div>
        </form>
      ) : (
        <>
          {/* Tools run before the answer that uses their results. */}
          <ToolTraceGroup traces={message.tool_calls} onDecide={actions.onDecide} onInspect={actions.onInspect} />
          <Markdown text={message.text} onCite={hasCitations ? setCitation : undefined} streaming={streaming} />
        </>
      )}
      {message.parts.map((p, i) => (
        <AttachedPart key={i} part={p} />
      ))}
      <CitationChips citations={message.citations} unavailable={message.unavailable} open={citation} setOpen={setCitation} />
      {streaming && message.text === "" && message.tool_calls.length === 0 && !message.reasoning && (
        <span className="typing" aria-label={t("chat.generating")} />
      )}
      {message.error && (
        <div className="message-error" role="alert" data-kind={message.error.kind}>
          <p className="error-text">{t(`error.${message.error.kind}`, { message: message.error.message })}</p>
          <p className="muted small">{t(`error.action.${message.error.kind}`)}</p>
        </div>
      )}
      {/* Without its actions a message keeps their room, so nothing moves when they appear. */}
      {!streaming && !showActions && <div className="message-actions" />}
      {!streaming && showActions && (
        <div className="message-actions" role="group" aria-label={t("chat.messageActions")}>
          <CopyButton icon text={() => message.text} testId="copy-message" />
          {isUser ? (
            <IconButton icon={Pencil} label={t("chat.edit")} testId="edit-message" onClick={() => setEditing(message.text)} />
          ) : (
            <IconButton icon={RefreshCw} label={t("chat.regenerate")} testId="regenerate" onClick={() => actions.onRegenerate(message)} />
          )}
          <IconButton icon={GitBranch} label={t("chat.fork")} testId="fork-message" onClick={() => actions.onFork(message)} />
          {confirming ? (
            <span className="confirm" data-testid="confirm-delete">
              {t("chat.deleteConfirm")}{" "}
              <button
                type="button"
                className="link danger"
                onClick={() => {
                  setConfirming(false);
                  actions.onDelete(message);
                }}
              >
                {t("common.delete")}
              </button>{" "}
              {/* The focus was on Delete, which is gone: it lands on Cancel, the safe answer. */}
              <button
                type="button"
                className="link"
                autoFocus
                onClick={() => {
                  refocusDelete.current = true;
                  setConfirming(false);
                }}
              >
                {t("common.cancel")}
              </button>
            </span>
          ) : (
            <IconButton icon={Trash2} label={t("common.delete")} tone="danger" testId="delete-message" ref={deleteButton} onClick={() => setConfirming(true)} />
          )}
        </div>
      )}
    </div>
  );
});
