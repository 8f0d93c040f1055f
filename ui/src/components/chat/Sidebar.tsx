// Conversation list: pinned ones first, then newest first under Today /
// Yesterday / Previous 7 days / Previous 30 days / Older; full-text search,
// new/rename/pin/delete.
// Ctrl/Cmd+N starts a conversation, Ctrl/Cmd+K focuses the search box.
import { useEffect, useRef, useState } from "react";
import { useI18n, type MessageKey } from "../../lib/i18n";
import type { Assistant, ConversationSummary } from "../../lib/ipc";
import { Pencil, Pin, Trash2 } from "lucide-react";
import { IconButton } from "../common/IconButton";
import { modalOpen } from "../Shortcuts";

export interface SidebarProps {
  conversations: ConversationSummary[];
  activeId: string | null;
  query: string;
  onQuery: (q: string) => void;
  onSelect: (id: string) => void;
  onNew: () => void;
  onRename: (id: string, title: string) => void;
  onDelete: (id: string) => void;
  onPin: (id: string, pinned: boolean) => void;
  /** Presets a new conversation may start from. */
  assistants?: Assistant[];
  assistantId?: string | null;
  onAssistant?: (id: string | null) => void;
  /** The time the groups are counted from (ms), taken when the list was loaded. */
  now: number;
}

const GROUPS: MessageKey[] = ["sidebar.today", "sidebar.yesterday", "sidebar.week", "sidebar.month", "sidebar.older"];

/** Which of `GROUPS` a conversation last changed at `ms` falls in, counted in local days. */
function groupOf(ms: number, now: number): number {
  const today = new Date(now);
  const daysBack = (n: number) => new Date(today.getFullYear(), today.getMonth(), today.getDate() - n).getTime();
  const starts = [daysBack(0), daysBack(1), daysBack(7), daysBack(30)];
  const index = starts.findIndex((start) => ms >= start);
  return index === -1 ? GROUPS.length - 1 : index;
}

export function Sidebar(props: SidebarProps) {
  const { conversations, activeId, query, onQuery, onSelect, onNew, onRename, onDelete, onPin } = props;
  const { assistants = [], assistantId = null, onAssistant, now } = props;
  const { t } = useI18n();
  const search = useRef<HTMLInputElement>(null);
  const [renaming, setRenaming] = useState<{ id: string; title: string } | null>(null);
  const [confirming, setConfirming] = useState<string | null>(null);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (!(e.ctrlKey || e.metaKey) || e.altKey || e.shiftKey || e.repeat || modalOpen()) return;
      const k = e.key.toLowerCase();
      if (k === "n") {
        e.preventDefault();
        onNew();
      } else if (k === "k") {
        e.preventDefault();
        search.current?.focus();
      }
    };
    window.addEventListener("keydown", onKey);
    return () => window.removeEventListener("keydown", onKey);
  }, [onNew]);

  const sorted = [...conversations].sort((a, b) => Number(b.pinned) - Number(a.pinned) || b.updated_at - a.updated_at);
  // The heading a conversation is listed under.
  const heading = (c: ConversationSummary): MessageKey => (c.pinned ? "sidebar.pinned" : (GROUPS[groupOf(c.updated_at, now)] ?? "sidebar.older"));
  return (
    <aside className="chat-sidebar" aria-label={t("sidebar.label")}>
      <button type="button" id="new-conversation" className="primary" onClick={onNew} title="Ctrl/Cmd+N">
        {t("sidebar.new")}
      </button>
      {assistants.length > 0 && onAssistant && (
        <select
          id="new-conversation-assistant"
          aria-label={t("sidebar.assistant")}
          value={assistantId ?? ""}
          onChange={(e) => onAssistant(e.target.value || null)}
        >
          <option value="">{t("sidebar.noAssistant")}</option>
          {assistants.map((a) => (
            <option key={a.id} value={a.id}>
              {a.name}
            </option>
          ))}
        </select>
      )}
      <input
        ref={search}
        id="conversation-search"
        type="search"
        aria-label={t("sidebar.search")}
        placeholder={t("sidebar.searchPlaceholder")}
        value={query}
        onChange={(e) => onQuery(e.target.value)}
      />
      <ul className="conversation-list" data-testid="conversation-list">
        {sorted.map((c, i) => [
          (i === 0 || heading(sorted[i - 1] ?? c) !== heading(c)) && (
            <li key={heading(c)} className="conversation-group">
              {t(heading(c))}
            </li>
          ),
          <li key={c.id} className={c.id === activeId ? "active" : undefined}>
            {renaming?.id === c.id ? (
              <form
                onSubmit={(e) => {
                  e.preventDefault();
                  if (renaming.title.trim()) onRename(c.id, renaming.title.trim());
                  setRenaming(null);
                }}
              >
                <input
                  autoFocus
                  aria-label={t("sidebar.renameLabel")}
                  value={renaming.title}
                  onChange={(e) => setRenaming({ id: c.id, title: e.target.value })}
                  onKeyDown={(e) => {
                    if (e.key === "Escape") {
                      e.preventDefault();
                      setRenaming(null);
                    }
                  }}
                  onBlur={() => setRenaming(null)}
                />
              </form>
            ) : (
              <button
                type="button"
                className="conversation"
                aria-current={c.id === activeId ? "true" : undefined}
                onClick={() => onSelect(c.id)}
              >
                <span className="conversation-title">{c.title || t("sidebar.untitled")}</span>
                {c.snippet && <small className="muted">{c.snippet}</small>}
              </button>
            )}
            {confirming === c.id ? (
              <span className="row">
                <button type="button" className="danger" onClick={() => { onDelete(c.id); setConfirming(null); }}>
                  {t("common.confirmDelete")}
                </button>
                <button type="button" onClick={() => setConfirming(null)}>
                  {t("common.cancel")}
                </button>
              </span>
            ) : (
              <span className="conversation-actions">
                <IconButton
                  icon={Pin}
                  label={t(c.pinned ? "sidebar.unpin" : "sidebar.pin", { title: c.title })}
                  aria-pressed={c.pinned}
                  onClick={() => onPin(c.id, !c.pinned)}
                />
                <IconButton icon={Pencil} label={t("sidebar.rename", { title: c.title })} onClick={() => setRenaming({ id: c.id, title: c.title })} />
                <IconButton icon={Trash2} tone="danger" label={t("sidebar.delete", { title: c.title })} onClick={() => setConfirming(c.id)} />
              </span>
            )}
          </li>,
        ])}
      </ul>
      {sorted.length === 0 && <p className="muted">{query ? t("sidebar.noMatches") : t("sidebar.empty")}</p>}
    </aside>
  );
}
