// The message list, virtualised so a 10k-message conversation stays smooth.
// Rows are measured as they render; the view follows the bottom while a reply
// streams unless the user has scrolled up, who then gets a button back to the
// latest message. A long conversation opens with its
// end loaded; older messages are fetched when the user scrolls to the top (or
// presses the button there), keeping the rows on screen in place.
// The first render is already scrolled to the end, so opening a conversation
// renders (and parses the markdown of) only the rows at its end, not first the
// rows at its top; rows are estimated from their content until measured.
// The rows of the latest calls with a tool's view stay rendered off screen, so
// a view keeps its state while the user scrolls away and back; a row that drops
// out of them stays until its views tore down.
import { useCallback, useContext, useEffect, useLayoutEffect, useMemo, useRef, useState } from "react";
import { defaultRangeExtractor, measureElement, observeElementRect, useVirtualizer, type Range } from "@tanstack/react-virtual";
import { useI18n } from "../../lib/i18n";
import type { Message } from "../../lib/ipc";
import { LiveViewsContext } from "../../lib/mcpApps";
import { ToolCatalogue, viewOf } from "../../lib/toolCatalogue";
import { MessageView, type MessageActions } from "./MessageView";

/** A row's height when it cannot be measured (not laid out yet). */
const ESTIMATE = 120;
const FALLBACK_RECT = { width: 800, height: 800 };
/** How many rows with tools' views stay rendered when off screen (each is a live page). */
export const LIVE_VIEW_ROWS = 8;

/**
 * A row's height before it is measured, from its text and tool calls, so the first render
 * holds about as many rows as fit on screen (each row rendered costs a markdown parse).
 */
export function estimateHeight(m: Message): number {
  const lines = m.text.split("\n").length + Math.floor(m.text.length / 100);
  // An attached picture shows at up to 480 px wide; a document is one folded line.
  const attached = m.parts.reduce((h, p) => h + (p.type === "image" ? 240 : 32), 0);
  return 56 + 22 * lines + 120 * m.tool_calls.length + attached;
}

export interface MessageListProps {
  messages: Message[];
  /** Branch messages before `messages` that are not loaded yet. */
  earlier?: number;
  /** Loads a page of older messages in front of `messages`. */
  onLoadEarlier?: () => Promise<unknown>;
  streamingId: string | null;
  actions: MessageActions;
  /** Viewport size before the first measurement (tests have no layout). */
  initialRect?: { width: number; height: number };
}

export function MessageList({ messages, earlier = 0, onLoadEarlier, streamingId, actions, initialRect }: MessageListProps) {
  const { t } = useI18n();
  const scrollRef = useRef<HTMLDivElement>(null);
  const atBottom = useRef(true);
  // Scrolled up from the end: the button back to it shows.
  const [away, setAway] = useState(false);
  const [loading, setLoading] = useState(false);
  const firstId = useRef<string | null>(null);
  const fallback = initialRect ?? FALLBACK_RECT;
  // The latest rows that show a tool's view, rendered wherever the list is scrolled.
  const catalogue = useContext(ToolCatalogue);
  const liveViews = useMemo(() => {
    const rows = messages.flatMap((m, i) => (m.tool_calls.some((c) => viewOf(catalogue, c) !== null) ? [i] : []));
    return rows.slice(-LIVE_VIEW_ROWS);
  }, [messages, catalogue]);
  // A row that is no longer among them is held (rendered) until its views tore down.
  const keptIds = liveViews.map((i) => messages[i]!.id).join("\n");
  const [kept, setKept] = useState(keptIds);
  const [holding, setHolding] = useState<ReadonlySet<string>>(new Set());
  if (kept !== keptIds) {
    const now = new Set(keptIds.split("\n"));
    const dropped = kept.split("\n").filter((id) => id !== "" && !now.has(id));
    setKept(keptIds);
    if (dropped.length > 0) setHolding((h) => new Set([...h, ...dropped]));
  }
  const views = useContext(LiveViewsContext);
  const asked = useRef(new Set<string>());
  useEffect(() => {
    for (const id of holding) {
      if (asked.current.has(id)) continue;
      asked.current.add(id);
      const calls = messages.find((m) => m.id === id)?.tool_calls.map((c) => c.call_id) ?? [];
      views.before(() => {
        asked.current.delete(id);
        setHolding((h) => new Set([...h].filter((x) => x !== id)));
      }, calls);
    }
  }, [holding, messages, views]);
  const rendered = useMemo(
    () => [...liveViews, ...messages.flatMap((m, i) => (holding.has(m.id) ? [i] : []))],
    [liveViews, holding, messages],
  );
  const rangeExtractor = useCallback(
    (range: Range) => [...new Set([...defaultRangeExtractor(range), ...rendered])].sort((a, b) => a - b),
    [rendered],
  );
  // The virtualizer is meant to be re-read on every render; it is not memoised.
  // eslint-disable-next-line react-hooks/incompatible-library
  const virtualizer = useVirtualizer({
    count: messages.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: (i) => (messages[i] ? estimateHeight(messages[i]) : ESTIMATE),
    overscan: 2,
    rangeExtractor,
    initialOffset: () => Math.max(0, messages.reduce((sum, m) => sum + estimateHeight(m), 0) - fallback.height),
    getItemKey: (i) => messages[i]?.id ?? i,
    initialRect: fallback,
    // Until the list has been laid out (or where there is no layout, as in
    // tests) it reports 0×0; assume the fallback size so rows still render.
    observeElementRect: (instance, cb) =>
      observeElementRect(instance, (rect) => cb(rect.width === 0 && rect.height === 0 ? fallback : rect)),
    // A row not laid out yet measures 0: keep the estimate rather than collapse it.
    measureElement: (el, entry, instance) => measureElement(el, entry, instance) || ESTIMATE,
  });

  // After older messages were put in front, keep the previously first row where it was.
  useLayoutEffect(() => {
    const previous = firstId.current;
    firstId.current = messages[0]?.id ?? null;
    if (previous === null || previous === firstId.current) return;
    const at = messages.findIndex((m) => m.id === previous);
    if (at > 0) virtualizer.scrollToIndex(at, { align: "start" });
  }, [messages, virtualizer]);

  // A ref, not only state: scroll events come faster than re-renders, and one page at a time is asked for.
  const inFlight = useRef(false);
  const loadEarlier = () => {
    if (inFlight.current || earlier === 0 || !onLoadEarlier) return;
    inFlight.current = true;
    setLoading(true);
    void onLoadEarlier().finally(() => {
      inFlight.current = false;
      setLoading(false);
    });
  };

  const last = messages[messages.length - 1];
  const lastSize = last ? last.text.length + last.tool_calls.length : 0;
  // A message the user has just sent (typed, or sent by a tool's view; its reply may arrive
  // with it) brings the list back to its end.
  // Only a change at the end moves the list: the same messages read again (as after a turn) do not.
  const lastId = last?.id ?? null;
  const seenLast = useRef(lastId);
  useEffect(() => {
    if (lastId === seenLast.current) return;
    const before = messages.findIndex((m) => m.id === seenLast.current);
    seenLast.current = lastId;
    if (before >= 0 && messages.slice(before + 1).some((m) => m.role === "user")) atBottom.current = true;
    // The list is read on every render; only a new last message is what this effect waits for.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [lastId]);
  useEffect(() => {
    if (atBottom.current && messages.length > 0) virtualizer.scrollToIndex(messages.length - 1, { align: "end" });
  }, [messages.length, lastSize, lastId, virtualizer]);

  return (
    <div
      className="message-list"
      ref={scrollRef}
      data-testid="message-list"
      role="log"
      // Not live: it would read an answer token by token, and a message's actions each time the
      // pointer draws them. The Announcer says when an answer is done, and what it says.
      aria-live="off"
      aria-label={t("chat.messages")}
      onScroll={(e) => {
        const el = e.currentTarget;
        atBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
        if (away === atBottom.current) setAway(!atBottom.current);
        if (el.scrollTop < 200) loadEarlier();
      }}
    >
      {earlier > 0 && (
        <button type="button" className="link load-earlier" data-testid="load-earlier" disabled={loading} onClick={loadEarlier}>
          {t("chat.earlier", { count: earlier })}
        </button>
      )}
      <div style={{ height: virtualizer.getTotalSize(), position: "relative", width: "100%" }}>
        {virtualizer.getVirtualItems().map((row) => {
          const m = messages[row.index];
          if (!m) return null;
          return (
            <div
              key={row.key}
              data-index={row.index}
              ref={virtualizer.measureElement}
              // --row-start places a row by its offset when a view in it cannot have a transform above it.
              style={{ position: "absolute", top: 0, left: 0, width: "100%", transform: `translateY(${row.start}px)`, ["--row-start" as string]: `${row.start}px` }}
            >
              <MessageView message={m} streaming={m.id === streamingId} latest={row.index === messages.length - 1} actions={actions} />
            </div>
          );
        })}
      </div>
      {away && messages.length > 0 && (
        <button
          type="button"
          className="jump-latest"
          data-testid="jump-latest"
          onClick={() => {
            atBottom.current = true;
            setAway(false);
            virtualizer.scrollToIndex(messages.length - 1, { align: "end" });
          }}
        >
          {t("chat.jumpToLatest")}
        </button>
      )}
    </div>
  );
}
