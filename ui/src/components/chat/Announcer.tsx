// What a screen reader hears without moving the focus: an answer that finished (with the
// start of its text, as the message list is not live), was stopped or failed, and a tool call
// that waits for the user's approval. A polite live region, its text set
// once per event.
import { useEffect, useRef, useState } from "react";
import { useI18n } from "../../lib/i18n";
import type { ConversationState } from "../../lib/chatStore";

/** How many characters of an answer are read out; the rest is in the conversation. */
const SPOKEN_CHARS = 400;

/** What may stand beside an emphasis mark: space, punctuation, or a script written without spaces. */
const EDGE = String.raw`\s\p{P}\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}`;
const EMPHASIS_OPEN = new RegExp(String.raw`(^|[${EDGE}])[*_](?=[^\s*_])`, "gu");
const EMPHASIS_CLOSE = new RegExp(String.raw`(?<=[^\s*_])[*_](?=$|[${EDGE}])`, "gu");

/** `text`'s first `n` characters as the reader sees them (an emoji with a skin tone is one). */
function firstChars(text: string, n: number): { head: string; cut: boolean } {
  const chars =
    typeof Intl.Segmenter === "function" ? Array.from(new Intl.Segmenter(undefined, { granularity: "grapheme" }).segment(text), (s) => s.segment) : Array.from(text);
  return { head: chars.slice(0, n).join(""), cut: chars.length > n };
}

/** An answer's Markdown as words: no code fences, rules, emphasis marks, heading or quote
 * marks, table pipes or link targets; cut short after [`SPOKEN_CHARS`] characters (whole
 * ones: an emoji is not cut in two). Only the answer's start is read, so only it is looked at. */
export function spoken(markdown: string): string {
  const words = markdown
    .slice(0, SPOKEN_CHARS * 8)
    .split("\n")
    .filter((line) => !/^\s*(```|~~~)/.test(line) && !/^ {0,3}([-*_=] *){3,}$/.test(line) && !/^ *\|?( *:?-+:? *\|)+ *:?-*:? *$/.test(line))
    .map((line) =>
      line
        .replace(/^ {0,3}((>|#{1,6}(?= |$)) *)+/, "")
        .replace(/^ *([-*+]|\d+[.)]) +/, "")
        .replace(/^ *\|/, "")
        .replace(/ *\| */g, " "),
    )
    .join(" ")
    .replace(/!?\[([^\]]*)\]\(([^()]|\([^()]*\))*\)/g, "$1")
    .replace(/`+/g, "")
    .replace(/(\*\*|__|~~)(?=\S)(.+?)(?<=\S)\1/g, "$2")
    .replace(EMPHASIS_OPEN, "$1")
    .replace(EMPHASIS_CLOSE, "")
    .replace(/\s+/g, " ")
    .trim();
  const { head, cut } = firstChars(words, SPOKEN_CHARS);
  return cut ? `${head.trimEnd()}…` : words;
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
        answer?.error || state.error || state.ended === "error" ? t("announce.failed")
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
