// One tool call in the message flow: server/tool, status, duration, collapsible
// arguments, the result, error and stderr tail, and the call's log messages.
import { useContext } from "react";
import { useI18n, type MessageKey } from "../../lib/i18n";
import type { ApprovalDecision, ToolProgress, ToolTrace } from "../../lib/ipc";
import { ToolCatalogue, toolOf, viewOf } from "../../lib/toolCatalogue";
import { CopyButton } from "../common/CopyButton";
import { IconButton } from "../common/IconButton";
import { ScanSearch } from "lucide-react";
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
  const info = toolOf(catalogue, trace.server, trace.tool);
  const view = viewOf(catalogue, trace);
  const p = trace.progress;
  return (
    <article
      className={`trace-card status-${trace.status}`}
      data-testid="trace-card"
      data-status={trace.status}
      aria-label={t("trace.label", { server: trace.server, tool: trace.tool })}
    >
      <header className="trace-head">
        <span className="trace-name">
          <McpIcons icons={info?.icons ?? []} /> <span className="muted">{trace.server}</span> ·{" "}
          <strong title={info?.title ? trace.tool : undefined}>{info?.title ?? trace.tool}</strong>
        </span>
        <span className="trace-status" data-testid="trace-status">
          {(trace.status === "running" || trace.status === "writing") && <span className="spinner" aria-hidden="true" />}
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
      {trace.status === "writing" ? (
        trace.arguments_text && (
          <pre className="json trace-writing" data-testid="trace-args-writing">
            {tail(trace.arguments_text)}
          </pre>
        )
      ) : trace.status === "pending_approval" && onDecide ? (
        <ApprovalCard trace={trace} tool={info} onDecide={(d) => onDecide(trace.call_id, d)} />
      ) : (
        <details className="trace-args">
          <summary>{t("trace.arguments")}</summary>
          <pre className="json" data-testid="trace-args">
            {pretty(trace.arguments)}
          </pre>
        </details>
      )}
      {view && info && <AppView trace={trace} tool={info} uri={view} />}
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
      {trace.result &&
        (view ? (
          <details className="trace-result-text">
            <summary>{t("trace.result")}</summary>
            <ToolResultView result={trace.result} server={trace.server} />
          </details>
        ) : (
          <ToolResultView result={trace.result} server={trace.server} />
        ))}
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
      {trace.logs.length > 0 && (
        <details className="trace-logs">
          <summary>{t("trace.logs", { count: trace.logs.length })}</summary>
          <ul>
            {trace.logs.map((l, i) => (
              <li key={i}>
                <code>{l.level}</code> {l.message}
              </li>
            ))}
          </ul>
        </details>
      )}
    </article>
  );
}

/** Parallel calls of one assistant step, side by side in call order. */
export function ToolTraceGroup({ traces, onDecide, onInspect }: { traces: ToolTrace[] } & Omit<ToolTraceCardProps, "trace">) {
  if (traces.length === 0) return null;
  return (
    <div className={traces.length > 1 ? "trace-group parallel" : "trace-group"} data-testid="trace-group">
      {traces.map((tr) => (
        <ToolTraceCard key={tr.call_id} trace={tr} onDecide={onDecide} onInspect={onInspect} />
      ))}
    </div>
  );
}
