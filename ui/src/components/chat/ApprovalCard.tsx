// Asks the user whether a tool call may run, showing its arguments in full,
// and what the tool is for and what the server says it does. A strict server's
// calls are asked every time: only "allow once" and "deny" are offered.
import { useI18n } from "../../lib/i18n";
import type { ApprovalDecision, ToolInfo, ToolTrace } from "../../lib/ipc";
import { ToolHints } from "../common/ToolHints";
import { pretty } from "./ToolResultView";

export function ApprovalCard({
  trace,
  tool,
  onDecide,
}: {
  trace: ToolTrace;
  /** The tool, when the chat page knows it. */
  tool?: ToolInfo;
  onDecide: (d: ApprovalDecision) => void;
}) {
  const { t } = useI18n();
  return (
    <div className="approval-card" role="group" aria-label={t("approval.title")} data-testid="approval-card">
      <p>{t("approval.question", { server: trace.server, tool: tool?.title ? `${tool.title} (${trace.tool})` : trace.tool })}</p>
      {tool && tool.description !== "" && <p className="muted small">{tool.description}</p>}
      {tool && tool.hints.length > 0 && (
        <p className="small" data-testid="approval-hints">
          {t("hint.says", { server: trace.server })} <ToolHints hints={tool.hints} />
        </p>
      )}
      <pre className="json" data-testid="approval-args">
        {pretty(trace.arguments)}
      </pre>
      {tool?.hints.includes("destructive") && (
        <p className="warning-text small" data-testid="approval-destructive">
          {t("approval.destructive")}
        </p>
      )}
      {trace.strict && (
        <p className="muted small" data-testid="approval-strict">
          {t("approval.strict", { server: trace.server })}
        </p>
      )}
      <div className="row">
        <button type="button" className="primary" data-testid="approve-once" onClick={() => onDecide("allow_once")}>
          {t("approval.once")}
        </button>
        {!trace.strict && (
          <>
            <button type="button" data-testid="approve-conversation" onClick={() => onDecide("allow_conversation")}>
              {t("approval.conversation")}
            </button>
            <button type="button" data-testid="approve-always" onClick={() => onDecide("allow_always")}>
              {t("approval.always")}
            </button>
          </>
        )}
        <button type="button" className="danger" data-testid="approve-deny" onClick={() => onDecide("deny")}>
          {t("approval.deny")}
        </button>
      </div>
    </div>
  );
}
