// One tool call in the message flow: a one-line summary (icon, server · tool, status,
// duration) that opens to the arguments, the result and the call's log messages. What needs
// the user stays in view without opening: the approval, the arguments being written, the
// progress, an error with the stderr tail, and the tool's own view.
import { useContext, useId, useState } from "react";
import { useI18n, type MessageKey } from "../../lib/i18n";
import type { ApprovalDecision, ToolProgress, ToolTrace } from "../../lib/ipc";
import { ToolCatalogue, toolOf, viewOf } from "../../lib/toolCatalogue";
import { CopyButton } from "../common/CopyButton";
import { IconButton } from "../common/IconButton";
import { Ban, ChevronRight, CircleCheck, CircleX, LoaderCircle, ScanSearch, ShieldQuestion, Wrench, type LucideIcon } from "lucide-react";
import { McpIcons } from "../common/McpIcons";
import { ApprovalCard } from "./ApprovalCard";
import { AppView } from "./AppView";
import { pretty, resultText, ToolResultView } from "./ToolResultView";

/** Each status's words. */
export const STATUS: Record<ToolTrace["status"], MessageKey> = {
  writing: "trace.writing",
  pending_approval: "trace.pending",
  running: "trace.running",
  done: "trace.done",
  error: "trace.error",
  cancelled: "trace.cancelled",
  denied: "trace.denied",
};

/** Each status's icon. */
const STATUS_ICON: Record<ToolTrace["status"], LucideIcon> = {
  writing: LoaderCircle,
  pending_approval: ShieldQuestion,
  running: LoaderCircle,
  done: CircleCheck,
  error: CircleX,
  cancelled: Ban,
  denied: Ban,
};

/** The most of a call's arguments shown while the model writes them: their end. */
export const WRITING_TAIL = 2000;

function tail(text: string): string {
  return text.length > WRITING_TAIL ? `…${text.slice(-WRITING_TAIL)}` : text;
}

export function formatDuration(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
}

export interface ToolTraceCardProps {
  trace: ToolTrace;
  onDecide?: (callId: string, d: ApprovalDecision) => void;
  onInspect?: (trace: ToolTrace) => void;
}

/** A running call's progress: a bar (a share when the server gives a total) and its message. */
export function CallProgress({ progress: p }: { progress: ToolProgress }) {
  const { t } = useI18n();
  const pct = p.total ? Math.min(100, Math.round((p.progress / p.total) * 100)) : null;
  return (
    <div className="trace-progress">
      <progress
        max={p.total ?? undefined}
        value={p.total ? p.progress : undefined}
        aria-label={t("trace.progress")}
        data-testid="trace-progress"
      />
      <small className="muted">
        {pct !== null ? `${pct}%` : String(p.progress)}
        {p.message ? ` · ${p.message}` : ""}
      </small>
    </div>
  );
}

export function ToolTraceCard({ trace, onDecide, onInspect }: ToolTraceCardProps) {
  const { t } = useI18n();
  const catalogue = useContext(ToolCatalogue);
  // Opened or closed by the user; until then a failed call's details are open, others closed.
  const [opened, setOpened] = useState<boolean | null>(null);
  const open = opened ?? trace.status === "error";
  const bodyId = useId();
  const info = toolOf(catalogue, trace.server, trace.tool);
  const view = viewOf(catalogue, trace);
  const p = trace.progress;
  const StatusIcon = STATUS_ICON[trace.status];
  const busy = trace.status === "running" || trace.status === "writing";
  return (
    <article
      className={`trace-card status-${trace.status}`}
      data-testid="trace-card"
      data-status={trace.status}
      aria-label={t("trace.label", { server: trace.server, tool: trace.tool })}
    >
      <header className="trace-head">
        <button type="button" className="trace-toggle" aria-expanded={open} aria-controls={bodyId} data-testid="trace-toggle" onClick={() => setOpened(!open)}>
          <ChevronRight size={14} aria-hidden="true" className="trace-chevron" />
          {info?.icons.length ? <McpIcons icons={info.icons} /> : <Wrench size={14} aria-hidden="true" />}
          <span className="trace-name">
            <span className="muted">{trace.server}</span> · <strong title={info?.title ? trace.tool : undefined}>{info?.title ?? trace.tool}</strong>
          </span>
        </button>
        <span className="trace-status" data-testid="trace-status">
          <StatusIcon size={14} aria-hidden="true" className={busy ? "spin" : undefined} />
          {t(STATUS[trace.status])}
        </span>
        {trace.duration_ms !== null && (
          <span className="trace-duration" data-testid="trace-duration">
            {formatDuration(trace.duration_ms)}
          </span>
        )}
        <span className="trace-actions">
          {trace.result && <CopyButton icon text={() => resultText(trace.result!)} testId="trace-copy" />}
          {onInspect && <IconButton icon={ScanSearch} label={t("trace.inspect")} testId="trace-inspect" onClick={() => onInspect(trace)} />}
        </span>
      </header>
      {trace.status === "running" && p && <CallProgress progress={p} />}
      {trace.status === "writing" && trace.arguments_text && (
        <pre className="json trace-writing" data-testid="trace-args-writing">
          {tail(trace.arguments_text)}
        </pre>
      )}
      {trace.status === "pending_approval" && onDecide && <ApprovalCard trace={trace} tool={info} onDecide={(d) => onDecide(trace.call_id, d)} />}
      {view && info && <AppView trace={trace} tool={info} uri={view} />}
      {trace.error && (
        <div className="trace-error" role="alert">
          <p>{trace.error}</p>
          {trace.stderr_tail && (
            <details open>
              <summary>{t("trace.stderr")}</summary>
              <pre className="stderr" data-testid="trace-stderr">
                {trace.stderr_tail}
              </pre>
            </details>
          )}
        </div>
      )}
      <div id={bodyId} className="trace-body" hidden={!open} data-testid="trace-body">
        {open && (
          <>
            {trace.status !== "writing" && (
              <section className="trace-args">
                <h4>{t("trace.arguments")}</h4>
                <pre className="json" data-testid="trace-args">
                  {pretty(trace.arguments)}
                </pre>
              </section>
            )}
            {trace.result?.kept && (
              <p className="trace-sizes muted small" data-testid="trace-sizes">
                {t("trace.sizes", { sent: trace.result.kept.sent_chars.toLocaleString(), kept: trace.result.kept.chars.toLocaleString() })}{" "}
                {onInspect && (
                  <button type="button" className="link" data-testid="trace-whole" onClick={() => onInspect(trace)}>
                    {t("trace.whole")}
                  </button>
                )}
              </p>
            )}
            {trace.result && (
              <section className="trace-result-text">
                <h4>{t("trace.result")}</h4>
                <ToolResultView result={trace.result} server={trace.server} />
              </section>
            )}
            {trace.logs.length > 0 && (
              <section className="trace-logs">
                <h4>{t("trace.logs", { count: trace.logs.length })}</h4>
                <ul>
                  {trace.logs.map((l, i) => (
                    <li key={i}>
                      <code>{l.level}</code> {l.message}
                    </li>
                  ))}
                </ul>
              </section>
            )}
          </>
        )}
      </div>
    </article>
  );
}

/**
 * The calls of one assistant step. Several make one block headed by how many and how long the
 * step took (they run side by side: the longest one).
 */
export function ToolTraceGroup({ traces, onDecide, onInspect }: { traces: ToolTrace[] } & Omit<ToolTraceCardProps, "trace">) {
  const { t } = useI18n();
  if (traces.length === 0) return null;
  const durations = traces.map((tr) => tr.duration_ms);
  const took = durations.every((d) => d !== null) ? Math.max(...(durations as number[])) : null;
  return (
    <div className={traces.length > 1 ? "trace-group several" : "trace-group"} data-testid="trace-group">
      {traces.length > 1 && (
        <p className="trace-group-head muted small" data-testid="trace-group-head">
          {took === null ? t("trace.groupRunning", { count: traces.length }) : t("trace.group", { count: traces.length, duration: formatDuration(took) })}
        </p>
      )}
      {traces.map((tr) => (
        <ToolTraceCard key={tr.call_id} trace={tr} onDecide={onDecide} onInspect={onInspect} />
      ))}
    </div>
  );
}
