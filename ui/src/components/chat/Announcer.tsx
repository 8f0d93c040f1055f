// What a screen reader hears without moving the focus: an answer that finished (with the
// start of its text, as the message list is not live), was stopped or failed, and a tool call
// that waits for the user's approval. A polite live region, its text set
// once per event.
import { useEffect, useRef, useState } from "react";
import { useI18n } from "../../lib/i18n";
import type { ConversationState } from "../../lib/chatStore";

/** How many characters of an answer are read out; the rest is in the conversation. */
const SPOKEN_CHARS = 400;

/** An answer's Markdown as words: no code fences, emphasis marks, heading marks, table pipes
 * or link targets; cut short after [`SPOKEN_CHARS`]. */
export function spoken(markdown: string): string {
  const words = markdown
    .replace(/^\s*(```|~~~).*$/gm, "")
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, "$1")
    .replace(/^\s{0,3}(#{1,6}|>|[-*+]|\d+[.)])\s+/gm, "")
    .replace(/^\s*\|?[\s:|-]+\|[\s:|-]*$/gm, "")
    .replace(/[|`*_~]+/g, " ")
    .replace(/\s+/g, " ")
    .trim();
  return words.length > SPOKEN_CHARS ? `${words.slice(0, SPOKEN_CHARS).trimEnd()}…` : words;
}

export function Announcer({ state }: { state: ConversationState }) {
  const { t } = useI18n();
  // Numbered, so the same words twice (two answers in a row) are a new node, heard again.
  const [said, setSaid] = useState({ n: 0, text: "" });
  const streaming = useRef(state.streamingId);
  const asked = useRef(new Set<string>());
  useEffect(() => {
    const was = streaming.current;
    streaming.current = state.streamingId;
    const waiting = state.messages.flatMap((m) => m.tool_calls).filter((c) => c.status === "pending_approval" && !asked.current.has(c.call_id));
    for (const c of waiting) asked.current.add(c.call_id);
    const first = waiting[0];
    if (first) {
      setSaid((s) => ({ n: s.n + 1, text: t("announce.approval", { server: first.server, tool: first.tool }) }));
    } else if (was !== null && state.streamingId === null) {
      const answer = state.messages.find((m) => m.id === was);
      const text =
        answer?.error ? t("announce.failed")
        : state.ended === "cancelled" ? t("announce.stopped")
        : answer?.text ? t("announce.answer", { text: spoken(answer.text) })
        : t("announce.done");
      setSaid((s) => ({ n: s.n + 1, text }));
    }
  }, [state, t]);
  return (
    <div className="sr-only" aria-live="polite" aria-atomic="true" data-testid="announcer">
      <span key={said.n}>{said.text}</span>
    </div>
  );
}
